"""A 404 on the session starts a new one under the client (MCP spec, session management)."""

from __future__ import annotations

from functools import partial
from typing import Any

import h11
import pytest
import trio
import trio.testing

import trimcp
from trimcp.transports.http import StreamableHttp

from ._fake import INIT_RESULT, Exchange, FakeRequest, FakeServer, mcp_app, result, start_server

WAIT = 60


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 20 ms of real idleness (real loopback I/O)."""
    return trio.testing.MockClock(autojump_threshold=0.02)


class Sessions:
    """An MCP app that issues ``s-1``, ``s-2``, ... and answers 404 for forgotten ones."""

    def __init__(self, *, version: str = "2025-11-25", forget_after_call: bool = False) -> None:
        self.live: set[str] = set()
        self.issued = 0
        self.version = version
        self.forget_after_call = forget_after_call
        self.inits: list[FakeRequest] = []
        self.second_version: str | None = None

    def forget(self) -> None:
        self.live.clear()

    async def initialize(self, request: FakeRequest, ex: Exchange) -> None:
        self.inits.append(request)
        self.issued += 1
        sid = f"s-{self.issued}"
        self.live.add(sid)
        version = self.second_version if self.issued > 1 and self.second_version else None
        answer = {**INIT_RESULT, "protocolVersion": version or self.version}
        await ex.json(result(request, answer), headers=[("Mcp-Session-Id", sid)])

    def app(self, methods: dict[str, Any] | None = None, **kw: Any) -> Any:
        inner = mcp_app({"initialize": self.initialize, **(methods or {})}, **kw)

        async def app(request: FakeRequest, ex: Exchange) -> None:
            sid = request.headers.get("mcp-session-id")
            if sid is not None and sid not in self.live and request.method != "DELETE":
                await ex.respond(404)
                return
            await inner(request, ex)
            if self.forget_after_call and request.body and request.rpc_method == "tools/call":
                self.forget()

        return app


async def until_initialized(server: FakeServer) -> None:
    """Until the server has seen the session's ``notifications/initialized`` (the client
    does not wait for its 202): a session forgotten before that would refuse the
    handshake's last step, not the call a test is about."""
    while not server.of("POST", "notifications/initialized"):  # noqa: ASYNC110 (a record)
        await trio.sleep(0.01)


async def hold(request: FakeRequest, ex: Exchange) -> None:
    """An SSE answer that never comes (keep-alive comments until the client leaves)."""
    await ex.start_sse()
    while True:
        await ex.raw(b":\n\n")
        await trio.sleep(0.5)


async def test_404_starts_a_new_session_and_resends_the_request(
    clock: trio.testing.MockClock,
) -> None:
    sessions = Sessions()
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app())
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                first = await client.call_tool("add", {"a": 1, "b": 2})
                sessions.forget()
                second = await client.call_tool("add", {"a": 2, "b": 3})
                channel = client.session.channel
                assert channel.session_id == "s-2"  # type: ignore[attr-defined]
                assert channel.renewal.count == 1  # type: ignore[attr-defined]
                assert client.protocol_version == "2025-11-25"
        nursery.cancel_scope.cancel()
    assert first.content[0] == trimcp.TextContent(text="sum=3")
    assert second.content[0] == trimcp.TextContent(text="sum=5")
    old, new = sessions.inits
    assert "mcp-session-id" not in new.headers
    assert isinstance(new.message["id"], str)
    assert new.message["id"].startswith("trimcp-reinitialize-")
    assert new.message["params"] == old.message["params"]
    initialized = server.of("POST", "notifications/initialized")
    assert [r.headers.get("mcp-session-id") for r in initialized] == ["s-1", "s-2"]
    calls = server.of("POST", "tools/call")
    assert [r.headers["mcp-session-id"] for r in calls] == ["s-1", "s-1", "s-2"]
    assert calls[2].message == calls[1].message  # the same request, re-sent once
    assert calls[2].headers["mcp-protocol-version"] == "2025-11-25"
    assert [r.headers.get("mcp-session-id") for r in server.of("DELETE")] == ["s-2"]


async def test_calls_in_flight_on_the_old_session_fail_as_expired(
    clock: trio.testing.MockClock,
) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        if request.message["params"]["name"] == "hold":
            await hold(request, ex)
        await ex.json(result(request, {"content": []}))

    sessions = Sessions()
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                failures: list[trimcp.McpError] = []

                async def held() -> None:
                    try:
                        await client.call_tool("hold")
                    except trimcp.McpError as exc:
                        failures.append(exc)

                async with trio.open_nursery() as calls:
                    calls.start_soon(held)
                    await trio.sleep(1)
                    sessions.forget()
                    answer = await client.call_tool("quick")
                assert answer.content == []
                await client.ping()  # the channel stays up
        nursery.cancel_scope.cancel()
    [failure] = failures
    assert not isinstance(failure, trimcp.ConnectionClosedError)
    assert "session s-1 expired" in failure.message
    assert "may or may not have run" in failure.message
    assert failure.data == {"httpStatus": 404, "sessionExpired": True}
    assert len(sessions.inits) == 2


async def test_a_second_404_fails_as_before(clock: trio.testing.MockClock) -> None:
    async def gone(request: FakeRequest, ex: Exchange) -> None:
        await ex.respond(404)

    sessions = Sessions()
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app({"tools/call": gone}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                with pytest.raises(trimcp.ConnectionClosedError, match="HTTP 404"):
                    await client.call_tool("t")
                with pytest.raises(trimcp.ConnectionClosedError):
                    await client.ping()
        nursery.cancel_scope.cancel()
    assert len(sessions.inits) == 2
    assert len(server.of("POST", "tools/call")) == 2
    assert server.of("DELETE") == []


async def test_another_version_on_the_new_session_fails_as_before(
    clock: trio.testing.MockClock,
) -> None:
    sessions = Sessions()
    sessions.second_version = "2025-06-18"
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app())
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                await until_initialized(server)
                sessions.forget()
                with pytest.raises(trimcp.ConnectionClosedError, match="HTTP 404"):
                    await client.call_tool("t")
        nursery.cancel_scope.cancel()
    assert len(sessions.inits) == 2
    assert server.of("POST", "notifications/initialized")[-1].headers["mcp-session-id"] == "s-1"


async def test_reinitializations_are_bounded_per_minute(clock: trio.testing.MockClock) -> None:
    sessions = Sessions(forget_after_call=True)
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app())
        transport = StreamableHttp(url=server.url, listen=False, max_reinitializations=2)
        with trio.fail_after(3 * WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                await client.call_tool("add")  # s-1, then forgotten
                await client.call_tool("add")  # s-2
                await client.call_tool("add")  # s-3
                await trio.sleep(61)  # the first two leave the window
                await client.call_tool("add")  # s-4
                await client.call_tool("add")  # s-5
                with pytest.raises(trimcp.ConnectionClosedError, match="HTTP 404"):
                    await client.call_tool("add")
        nursery.cancel_scope.cancel()
    assert len(sessions.inits) == 5


async def test_a_caller_giving_up_does_not_cut_the_handshake_short(
    clock: trio.testing.MockClock,
) -> None:
    sessions = Sessions()

    async def slow_initialize(request: FakeRequest, ex: Exchange) -> None:
        if sessions.issued:
            await trio.sleep(5)
        await sessions.initialize(request, ex)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app({"initialize": slow_initialize}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                await until_initialized(server)
                sessions.forget()
                with pytest.raises(trimcp.RequestTimeoutError):
                    await client.call_tool("add", {"a": 1, "b": 1}, timeout=1)
                answer = await client.call_tool("add", {"a": 2, "b": 2})
                assert client.session.channel.session_id == "s-2"  # type: ignore[attr-defined]
        nursery.cancel_scope.cancel()
    assert answer.content[0] == trimcp.TextContent(text="sum=4")
    assert len(sessions.inits) == 2


async def test_reinitialize_false_keeps_a_404_fatal(clock: trio.testing.MockClock) -> None:
    sessions = Sessions()
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app())
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False, reinitialize=False),
                era="handshake",
            ) as client:
                await until_initialized(server)
                sessions.forget()
                with pytest.raises(trimcp.ConnectionClosedError, match="new client"):
                    await client.call_tool("t")
        nursery.cancel_scope.cancel()
    assert len(sessions.inits) == 1


async def test_404_on_the_get_stream_renews_and_reopens_it(
    clock: trio.testing.MockClock,
) -> None:
    sessions = Sessions()

    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        if request.headers.get("mcp-session-id") != "s-1":
            await hold(request, ex)
        await ex.start_sse()
        await trio.sleep(1)
        sessions.forget()  # the server ends the session, and with it the stream
        await ex.end()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, sessions.app(on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url), era="handshake"
            ) as client:
                await trio.sleep(10)
                channel = client.session.channel
                assert channel.session_id == "s-2"  # type: ignore[attr-defined]
                answer = await client.call_tool("add", {"a": 1, "b": 1})
        nursery.cancel_scope.cancel()
    assert answer.content[0] == trimcp.TextContent(text="sum=2")
    gets = [r.headers.get("mcp-session-id") for r in server.of("GET")]
    assert gets == ["s-1", "s-1", "s-2"]
    assert server.of("POST", "tools/call")[0].headers["mcp-session-id"] == "s-2"


# ---------------------------------------------------------------------- end to end


async def _delete_session(port: int, session_id: str, version: str) -> int:
    """``DELETE /mcp`` with ``session_id`` over a raw h11 connection; the status."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    conn = h11.Connection(h11.CLIENT)
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Mcp-Session-Id", session_id),
        ("MCP-Protocol-Version", version),
        ("Connection", "close"),
    ]
    data = conn.send(h11.Request(method="DELETE", target="/mcp", headers=headers))
    await stream.send_all((data or b"") + (conn.send(h11.EndOfMessage()) or b""))
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                return event.status_code
    finally:
        await stream.aclose()


async def test_a_session_deleted_on_trimcp_server_is_renewed(engine: str) -> None:
    server = trimcp.Server("own", version="1")

    @server.tool()
    async def add(a: int, b: int) -> str:
        return f"sum={a + b}"

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(trimcp.serve_http, server, port=0, engine=engine))
            url = f"http://127.0.0.1:{port}/mcp"
            async with trimcp.open_client(trimcp.streamable_http(url), era="handshake") as client:
                first = await client.call_tool("add", {"a": 1, "b": 2})
                channel = client.session.channel
                old = channel.session_id  # type: ignore[attr-defined]
                assert old is not None
                assert await _delete_session(port, old, client.protocol_version) < 300
                second = await client.call_tool("add", {"a": 2, "b": 3})
                assert channel.session_id not in (None, old)  # type: ignore[attr-defined]
                assert channel.renewal.count == 1  # type: ignore[attr-defined]
                third = await client.call_tool("add", {"a": 3, "b": 4})
            nursery.cancel_scope.cancel()
    assert first.content[0] == trimcp.TextContent(text="sum=3")
    assert second.content[0] == trimcp.TextContent(text="sum=5")
    assert third.content[0] == trimcp.TextContent(text="sum=7")

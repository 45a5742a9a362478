"""Failures and who they reach: HTTP errors, 404 sessions, drops, cancellation, close."""

from __future__ import annotations

import itertools
import socket

import pytest
import trio
import trio.testing

import trimcp
from trimcp.transports.http import StreamableHttp, _client_conn
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS

from ._fake import Exchange, FakeRequest, mcp_app, result, start_server

WAIT = 60


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 20 ms of real idleness (real loopback I/O)."""
    return trio.testing.MockClock(autojump_threshold=0.02)


async def hold(request: FakeRequest, ex: Exchange) -> None:
    """An SSE answer that never comes; keep-alive comments notice a client that left."""
    await ex.start_sse()
    while True:
        await ex.raw(b":\n\n")
        await trio.sleep(0.5)


async def answer_in_3s(request: FakeRequest, ex: Exchange) -> None:
    await trio.sleep(3)
    await ex.json(result(request, {"content": []}))


async def test_http_errors_fail_exactly_their_call(clock: trio.testing.MockClock) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        name = request.message["params"]["name"]
        if name == "boom":
            await ex.respond(500, b"kaput", [("Content-Type", "text/plain")])
        elif name == "bad":
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad"}}
            await ex.json(error, status=400)
        elif name == "garbage":
            await ex.json({"hello": "world"})
        else:
            await trio.sleep(1)
            await ex.json(result(request, {"content": []}))

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                async with trio.open_nursery() as calls:
                    slow: list[trimcp.CallToolResult] = []

                    async def slow_call() -> None:
                        slow.append(await client.call_tool("slow"))

                    calls.start_soon(slow_call)
                    with pytest.raises(trimcp.McpError) as boom:
                        await client.call_tool("boom")
                    with pytest.raises(trimcp.McpError) as bad:
                        await client.call_tool("bad")
                    with pytest.raises(trimcp.McpError) as garbage:
                        await client.call_tool("garbage")
                assert slow[0].content == []
                await client.ping()
        nursery.cancel_scope.cancel()
    assert boom.value.code == INTERNAL_ERROR
    assert boom.value.message == "HTTP 500 Internal Server Error: kaput"
    assert boom.value.data == {"httpStatus": 500}
    assert bad.value.code == INVALID_PARAMS
    assert bad.value.message == "HTTP 400: bad"
    assert bad.value.data == {"httpStatus": 400}
    assert garbage.value.code == INTERNAL_ERROR


async def test_404_ends_the_session_for_every_waiting_call(
    clock: trio.testing.MockClock,
) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        if request.message["params"]["name"] == "hold":
            await hold(request, ex)
        await ex.respond(404)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False, reinitialize=False),
                era="handshake",
            ) as client:
                failures: list[BaseException] = []

                async def held() -> None:
                    try:
                        await client.call_tool("hold")
                    except trimcp.ConnectionClosedError as exc:
                        failures.append(exc)

                async with trio.open_nursery() as calls:
                    calls.start_soon(held)
                    await trio.sleep(1)
                    with pytest.raises(trimcp.ConnectionClosedError, match="HTTP 404"):
                        await client.call_tool("gone")
                assert len(failures) == 1
                assert "new session" in str(failures[0])
                assert client.session.channel.session_expired  # type: ignore[attr-defined]
                with pytest.raises(trimcp.ConnectionClosedError):
                    await client.ping()
        nursery.cancel_scope.cancel()
    assert server.of("DELETE") == []  # the session is already gone


async def test_dropped_connection_fails_everything_waiting(
    clock: trio.testing.MockClock,
) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        if request.message["params"]["name"] == "hold":
            await hold(request, ex)
        await ex.start_sse()
        await trio.sleep(1)
        await ex.abort()  # mid-stream, no event id: nothing to resume

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                failed_at: list[float] = []

                async def one(name: str) -> None:
                    with pytest.raises(trimcp.ConnectionClosedError, match="lost the connection"):
                        await client.call_tool(name)
                    failed_at.append(trio.current_time())

                async with trio.open_nursery() as calls:
                    calls.start_soon(one, "hold")
                    calls.start_soon(one, "hold")
                    calls.start_soon(one, "drop")
                assert len(failed_at) == 3
                assert max(failed_at) - min(failed_at) < 0.01  # all at once
                with pytest.raises(trimcp.ConnectionClosedError):
                    await client.ping()
        nursery.cancel_scope.cancel()


async def test_a_broken_channel_never_cancels_the_code_using_the_client(
    clock: trio.testing.MockClock,
) -> None:
    """The waiting call fails; the code around it goes on (no Cancelled from below)."""

    async def call(request: FakeRequest, ex: Exchange) -> None:
        await ex.start_sse()
        await trio.sleep(1)
        await ex.abort()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        reached: list[str] = []
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                with pytest.raises(trimcp.ConnectionClosedError, match="lost the connection"):
                    await client.call_tool("drop")
                await trio.sleep(5)  # a checkpoint after the break: not cancelled
                reached.append("after the break")
        assert reached == ["after the break"]
        nursery.cancel_scope.cancel()


async def test_unreachable_server_fails_open_client(clock: trio.testing.MockClock) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before use: nothing listens
    with trio.fail_after(WAIT), pytest.raises(trimcp.ConnectionClosedError) as failed:
        async with trimcp.open_client(
            trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp"), era="handshake"
        ):
            pass
    assert "cannot connect to 127.0.0.1" in str(failed.value.__cause__)


async def test_delete_on_close_is_bounded_when_black_holed(
    clock: trio.testing.MockClock,
) -> None:
    async def on_delete(request: FakeRequest, ex: Exchange) -> None:
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_delete=on_delete))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ):
                pass
            closed = trio.current_time()
        nursery.cancel_scope.cancel()
    (delete,) = server.of("DELETE")
    assert delete.headers["mcp-session-id"] == "s-1"
    assert 1.9 <= closed - delete.time <= 2.1


async def test_close_from_a_cancelled_scope_still_deletes(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())
        with trio.move_on_after(5):
            async with trimcp.open_client(trimcp.streamable_http(server.url), era="handshake"):
                await trio.sleep_forever()
        await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert len(server.of("DELETE")) == 1


async def test_cancelled_call_sends_cancel_and_drops_its_stream(
    clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": hold}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                with trio.move_on_after(2):
                    await client.call_tool("hold")
                await trio.sleep(2)
                assert client.session.channel.pool.opened >= 2  # type: ignore[attr-defined]
                await client.ping()
        nursery.cancel_scope.cancel()
    (call,) = server.of("POST", "tools/call")
    (cancel,) = server.of("POST", "notifications/cancelled")
    assert cancel.message["params"]["requestId"] == call.message["id"]
    assert server.disconnects == 1  # the held stream was closed by the client


async def test_pool_bound_makes_sends_wait(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": answer_in_3s}))
        transport = StreamableHttp(url=server.url, listen=False, max_connections=1)
        with trio.fail_after(WAIT):
            async with (
                trimcp.open_client(transport, era="handshake") as client,
                trio.open_nursery() as calls,
            ):
                for _ in range(3):
                    calls.start_soon(client.call_tool, "slow")
        nursery.cancel_scope.cancel()
    times = [r.time for r in server.of("POST", "tools/call")]
    assert [round(b - a) for a, b in itertools.pairwise(times)] == [3, 3]
    assert {r.connection for r in server.requests} == {1}


@pytest.mark.parametrize("max_connecting", [1, 3])
async def test_at_most_max_connecting_connections_are_opened_at_once(
    clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch, max_connecting: int
) -> None:
    """A burst of sends opens its connections ``max_connecting`` at a time (a server's
    accept backlog is never flooded), and every send gets through."""
    real_open_tcp = _client_conn.open_tcp
    connecting = [0]
    most = [0]

    async def slow_open_tcp(host: str, port: int) -> trio.SocketStream:
        connecting[0] += 1
        most[0] = max(most[0], connecting[0])
        try:
            await trio.sleep(0.5)  # virtual time: a slow network
            return await real_open_tcp(host, port)
        finally:
            connecting[0] -= 1

    monkeypatch.setattr(_client_conn, "open_tcp", slow_open_tcp)

    async def quick(request: FakeRequest, ex: Exchange) -> None:
        await ex.json(result(request, {"content": []}))

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": quick}))
        transport = StreamableHttp(url=server.url, listen=False, max_connecting=max_connecting)
        with trio.fail_after(WAIT):
            async with (
                trimcp.open_client(transport, era="handshake") as client,
                trio.open_nursery() as calls,
            ):
                for _ in range(12):
                    calls.start_soon(client.call_tool, "quick")
        nursery.cancel_scope.cancel()
    assert len(server.of("POST", "tools/call")) == 12
    assert most[0] == max_connecting


@pytest.mark.parametrize("how", ["cancelled", "timed out"])
async def test_a_call_given_up_before_its_post_is_written_is_never_sent(
    clock: trio.testing.MockClock, how: str
) -> None:
    """A call waiting for the pool's only connection, given up by its caller or by its
    timeout (the session's deadline timer: the channel gives up a POST not yet written),
    is never POSTed and sends no notifications/cancelled; the call holding the
    connection is untouched, and a timeout fails on time."""
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": answer_in_3s}))
        transport = StreamableHttp(url=server.url, listen=False, max_connections=1)
        first: list[trimcp.CallToolResult] = []
        with trio.fail_after(WAIT):
            async with (
                trimcp.open_client(transport, era="handshake") as client,
                trio.open_nursery() as calls,
            ):

                async def first_call() -> None:
                    first.append(await client.call_tool("first"))

                calls.start_soon(first_call)
                await trio.sleep(1)  # "first" holds the only connection
                if how == "cancelled":
                    with trio.move_on_after(1) as waited:
                        await client.call_tool("second")  # waits for a connection
                    assert waited.cancelled_caught
                else:
                    assert client.session._timed_sends  # no cancel scope per call
                    started = trio.current_time()
                    with pytest.raises(trimcp.RequestTimeoutError):
                        await client.call_tool("second", timeout=1)
                    assert trio.current_time() - started == pytest.approx(1, abs=0.01)
                assert client.session.pending == 1
        nursery.cancel_scope.cancel()
    assert [r.message["params"]["name"] for r in server.of("POST", "tools/call")] == ["first"]
    assert server.of("POST", "notifications/cancelled") == []
    assert len(first) == 1
    assert not first[0].is_error


async def test_a_pool_under_contention_keeps_the_connections_it_has(
    clock: trio.testing.MockClock,
) -> None:
    """More callers than connections: a connection given back while others wait is kept
    for them, whatever ``max_idle_connections`` says, so the pool never closes one only
    to open another (a connect and an accept per call)."""

    async def quick(request: FakeRequest, ex: Exchange) -> None:
        await trio.sleep(0.01)
        await ex.json(result(request, {"content": []}))

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": quick}))
        transport = StreamableHttp(
            url=server.url, listen=False, max_connections=4, max_idle_connections=1
        )
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:

                async def caller() -> None:
                    for _ in range(20):
                        await client.call_tool("quick")

                async with trio.open_nursery() as calls:
                    for _ in range(12):
                        calls.start_soon(caller)
                opened = client.session.channel.pool.opened  # type: ignore[attr-defined]
        nursery.cancel_scope.cancel()
    assert len(server.of("POST", "tools/call")) == 240
    assert opened <= 4


async def test_a_pool_keeps_its_connections_when_the_load_ebbs(
    clock: trio.testing.MockClock,
) -> None:
    """By default as many connections stay idle as may be live: waves of callers with
    quiet moments between them (nobody waiting when a connection comes back) reuse the
    connections of the first wave instead of closing some and opening them again."""

    async def quick(request: FakeRequest, ex: Exchange) -> None:
        await trio.sleep(0.01)
        await ex.json(result(request, {"content": []}))

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": quick}))
        transport = StreamableHttp(url=server.url, listen=False, max_connections=12)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                for _ in range(5):
                    async with trio.open_nursery() as wave:
                        for _ in range(12):
                            wave.start_soon(client.call_tool, "quick")
                    await trio.sleep(0.1)  # the load ebbs: every connection is idle
                opened = client.session.channel.pool.opened  # type: ignore[attr-defined]
        nursery.cancel_scope.cancel()
    assert len(server.of("POST", "tools/call")) == 60
    assert opened == 12


async def test_a_call_that_times_out_while_the_get_stream_opens_fails_on_time(
    clock: trio.testing.MockClock,
) -> None:
    """A request waits for the standalone GET stream to open (within connect_timeout);
    its own, shorter timeout still ends that wait on time, before anything is POSTed."""

    async def slow_get(request: FakeRequest, ex: Exchange) -> None:
        await trio.sleep(20)  # the stream's answer is slow to come
        await ex.respond(405)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_get=slow_get))
        transport = StreamableHttp(url=server.url, connect_timeout=30)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                started = trio.current_time()
                with pytest.raises(trimcp.RequestTimeoutError):
                    await client.call_tool("late", timeout=1)
                assert trio.current_time() - started == pytest.approx(1, abs=0.01)
        nursery.cancel_scope.cancel()
    assert server.of("POST", "tools/call") == []
    assert server.of("POST", "notifications/cancelled") == []


async def test_a_post_that_cannot_be_written_fails_its_call(
    clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request's caller does not wait for its POST to be written (it waits for the
    answer): a POST that fails before its bytes go out fails exactly that call, at
    once, and the calls after it go through."""
    original = _client_conn.HttpConnection.send_request
    refused = itertools.count()

    async def send_request(self: _client_conn.HttpConnection, *args: object) -> None:
        method, origin, headers, body = args
        if b'"broken"' in (body or b"") and next(refused) == 0:
            raise ValueError("cannot send this HTTP request: refused by the test")
        await original(self, method, origin, headers, body)  # type: ignore[arg-type]

    monkeypatch.setattr(_client_conn.HttpConnection, "send_request", send_request)
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())
        transport = StreamableHttp(url=server.url, listen=False)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                started = trio.current_time()
                with pytest.raises(trimcp.ConnectionClosedError, match="could not be sent"):
                    await client.call_tool("broken")
                assert trio.current_time() == started  # failed at once, not timed out
                assert client.session.pending == 0
                assert not (await client.call_tool("broken")).is_error
        nursery.cancel_scope.cancel()
    assert [r.message["params"]["name"] for r in server.of("POST", "tools/call")] == ["broken"]

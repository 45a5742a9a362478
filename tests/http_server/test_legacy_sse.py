"""The 2024-11-05 HTTP+SSE transport served beside Streamable HTTP (in-process ASGI)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.transports.http import HttpServerLimits, LegacySseChannel, StreamableHttpApp
from trimcp.wire import Notification, SSEDecoder, SSEEvent

from ._asgi import rpc
from ._fixture import make_server

LEGACY_INIT = {
    "protocolVersion": "2024-11-05",
    "capabilities": {"sampling": {}},
    "clientInfo": {"name": "legacy-test", "version": "1"},
}
ENDPOINT = re.compile(r"/messages\?session_id=([A-Za-z0-9_-]{32})")


class Response:
    """One ASGI response as it arrives: status, headers, body and SSE events."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body = b""
        self.events: list[SSEEvent] = []
        self.complete = trio.Event()
        self.disconnect = trio.Event()
        self._changed = trio.Event()
        self._decoder = SSEDecoder()

    async def send(self, message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert self.status is None, "response started twice"
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        else:
            assert not self.complete.is_set(), "body after the end"
            chunk = message.get("body", b"")
            self.body += chunk
            if self.headers.get("content-type") == "text/event-stream":
                self.events.extend(self._decoder.feed(chunk))
            if not message.get("more_body", False):
                self.complete.set()
        self._changed.set()
        self._changed = trio.Event()

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    async def event(self, index: int) -> SSEEvent:
        """The ``index``-th event of the stream, once it has arrived."""
        with trio.fail_after(10):
            while len(self.events) <= index:
                assert not self.complete.is_set(), f"stream ended with {len(self.events)} events"
                await self._changed.wait()
        return self.events[index]

    async def finished(self) -> None:
        with trio.fail_after(10):
            await self.complete.wait()


class Client:
    """Drives the app in-process; ``server`` is the local address requests arrive on."""

    def __init__(self, app: StreamableHttpApp, nursery: trio.Nursery) -> None:
        self.app = app
        self.nursery = nursery

    def start(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        *,
        query: str = "",
        root_path: str = "",
    ) -> Response:
        response = Response()
        items = {"host": "127.0.0.1:8000", **(headers or {})}
        if body and "content-length" not in items and "transfer-encoding" not in items:
            items["content-length"] = str(len(body))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": root_path,
            "query_string": query.encode(),
            "headers": [(k.lower().encode(), v.encode()) for k, v in items.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        pending = [body]

        async def receive() -> dict[str, Any]:
            if pending:
                return {"type": "http.request", "body": pending.pop(), "more_body": False}
            await response.disconnect.wait()
            return {"type": "http.disconnect"}

        async def run() -> None:
            await self.app(scope, receive, response.send)
            response.complete.set()

        self.nursery.start_soon(run)
        return response

    async def open_stream(self, **headers: str) -> tuple[Response, str]:
        """``GET /sse``; the stream and the endpoint URI of its first event."""
        stream = self.start("GET", "/sse", headers={"accept": "text/event-stream", **headers})
        first = await stream.event(0)
        assert first.event == "endpoint"
        return stream, first.data

    async def post(
        self, endpoint: str, body: bytes, headers: Mapping[str, str] | None = None
    ) -> Response:
        path, _, query = endpoint.partition("?")
        response = self.start(
            "POST",
            path,
            body,
            {"content-type": "application/json"} if headers is None else headers,
            query=query,
        )
        await response.finished()
        return response


@asynccontextmanager
async def running(server: trimcp.Server | None = None, **options: Any) -> AsyncIterator[Client]:
    app = trimcp.asgi_app(server or make_server(), **options)
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        yield Client(app, nursery)
        nursery.cancel_scope.cancel()


async def handshake(client: Client) -> tuple[Response, str]:
    stream, endpoint = await client.open_stream()
    accepted = await client.post(endpoint, rpc(1, "initialize", LEGACY_INIT))
    assert accepted.status == 202
    init = json.loads((await stream.event(1)).data)
    assert init["id"] == 1
    assert init["result"]["protocolVersion"] == "2024-11-05"
    assert (await client.post(endpoint, rpc(None, "notifications/initialized"))).status == 202
    return stream, endpoint


async def test_first_event_is_the_endpoint_with_a_fresh_id() -> None:
    async with running() as client:
        stream, endpoint = await client.open_stream()
        _, other_endpoint = await client.open_stream()
        assert stream.status == 200
        assert stream.headers["content-type"] == "text/event-stream"
        assert stream.headers["cache-control"] == "no-cache"
        match = ENDPOINT.fullmatch(endpoint)
        assert match is not None, endpoint
        assert ENDPOINT.fullmatch(other_endpoint) is not None
        assert other_endpoint != endpoint
        assert client.app.legacy is not None
        assert len(client.app.legacy) == 2
        assert len(client.app.manager) == 2  # both count as sessions of the app
        # A legacy id is no Streamable HTTP session id.
        assert client.app.manager.get(match.group(1)) is None


async def test_initialize_list_and_call_over_the_stream() -> None:
    async with running() as client:
        stream, endpoint = await handshake(client)
        accepted = await client.post(endpoint, rpc(2, "tools/list"))
        assert accepted.status == 202
        assert accepted.body == b""
        listed = json.loads((await stream.event(2)).data)
        assert listed["id"] == 2
        assert {"echo", "chatty", "ask"} <= {t["name"] for t in listed["result"]["tools"]}
        call = rpc(3, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert (await client.post(endpoint, call)).status == 202
        echoed = json.loads((await stream.event(3)).data)
        assert echoed["id"] == 3
        assert echoed["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert all(e.event == "message" for e in stream.events[1:])


async def test_progress_and_a_reverse_request_share_the_stream() -> None:
    async with running() as client:
        stream, endpoint = await handshake(client)
        chatty = rpc(
            2,
            "tools/call",
            {"name": "chatty", "arguments": {"count": 2}, "_meta": {"progressToken": "p"}},
        )
        assert (await client.post(endpoint, chatty)).status == 202
        seen: list[Any] = []
        while not seen or seen[-1].get("id") != 2:
            seen.append(json.loads((await stream.event(2 + len(seen))).data))
        progress = [
            m["params"]["progress"] for m in seen if m.get("method") == "notifications/progress"
        ]
        assert progress == [0, 1]
        assert seen[-1]["result"]["content"][0]["text"] == "done"

        base = len(stream.events)
        ask = rpc(3, "tools/call", {"name": "ask", "arguments": {"prompt": "hi"}})
        assert (await client.post(endpoint, ask)).status == 202
        sampling = json.loads((await stream.event(base)).data)
        assert sampling["method"] == "sampling/createMessage"
        answer = {
            "jsonrpc": "2.0",
            "id": sampling["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "echo"},
                "model": "m",
            },
        }
        assert (await client.post(endpoint, json.dumps(answer).encode())).status == 202
        result = json.loads((await stream.event(base + 1)).data)
        assert result["id"] == 3
        assert result["result"]["content"][0]["text"] == "model said: echo"


async def test_closing_the_stream_ends_the_session() -> None:
    server = make_server()
    async with running(server) as client:
        stream, endpoint = await handshake(client)
        call = rpc(2, "tools/call", {"name": "wait_release", "arguments": {}})
        assert (await client.post(endpoint, call)).status == 202
        with trio.fail_after(10):
            await server.test_state["slow_started"].wait()
        stream.disconnect.set()
        await stream.finished()
        with trio.fail_after(10):
            await server.test_state["slow_done"].wait()  # its tasks were cancelled
        gone = await client.post(endpoint, rpc(3, "ping"))
        assert gone.status == 404
        assert gone.json["error"]["code"] == -32001
        assert client.app.legacy is not None
        assert len(client.app.legacy) == 0
        assert len(client.app.manager) == 0
        with trio.fail_after(10):
            while server.sessions:
                await trio.testing.wait_all_tasks_blocked()
        assert not server.sessions


async def test_a_session_ended_by_the_server_ends_its_stream() -> None:
    async with running() as client:
        stream, endpoint = await handshake(client)
        assert client.app.legacy is not None
        match = ENDPOINT.fullmatch(endpoint)
        assert match is not None
        channel = client.app.legacy.get(match.group(1))
        assert channel is not None
        client.app.manager.terminate(channel)
        await stream.finished()
        assert stream.status == 200
        assert (await client.post(endpoint, rpc(2, "ping"))).status == 404


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("", 400),
        ("other=1", 400),
        ("session_id=a%20b", 400),
        ("session_id=x&session_id=y", 400),
        ("session_id=" + "A" * 32, 404),
    ],
)
async def test_session_id_is_required_well_formed_and_known(query: str, status: int) -> None:
    async with running() as client:
        response = await client.post("/messages?" + query, rpc(1, "ping"))
        assert response.status == status
        assert response.json["jsonrpc"] == "2.0"
        assert "error" in response.json


async def test_post_guards() -> None:
    limits = HttpServerLimits(max_body_size=200)
    async with running(limits=limits) as client:
        stream, endpoint = await client.open_stream()
        plain = await client.post(endpoint, rpc(1, "ping"), {"content-type": "text/plain"})
        assert plain.status == 415
        big = rpc(1, "ping", {"pad": "x" * 300})
        too_big = await client.post(endpoint, big)
        assert too_big.status == 413
        assert too_big.headers.get("connection") == "close"
        streamed = client.start(
            "POST",
            "/messages",
            big,
            {"content-type": "application/json", "transfer-encoding": "chunked"},
            query=endpoint.partition("?")[2],
        )
        await streamed.finished()
        assert streamed.status == 413
        broken = await client.post(endpoint, b'{"jsonrpc": ')
        assert broken.status == 400
        assert broken.json["error"]["code"] == -32700
        batch = await client.post(endpoint, b"[" + rpc(1, "ping") + b"]")
        assert batch.status == 400
        evil = await client.post(
            endpoint,
            rpc(1, "ping"),
            {"content-type": "application/json", "origin": "http://evil.example"},
        )
        assert evil.status == 403
        # None of these reached the session: the stream holds only the endpoint event.
        assert len(stream.events) == 1
        ok = await client.post(endpoint, rpc(None, "notifications/initialized"))
        assert ok.status == 202


async def test_stream_guards_and_methods() -> None:
    async with running() as client:
        evil_origin = client.start("GET", "/sse", headers={"origin": "http://evil.example"})
        evil_host = client.start("GET", "/sse", headers={"host": "evil.example"})
        json_only = client.start("GET", "/sse", headers={"accept": "application/json"})
        put = client.start("PUT", "/sse")
        get_messages = client.start("GET", "/messages")
        for response in (evil_origin, evil_host, json_only, put, get_messages):
            await response.finished()
        assert evil_origin.status == 403
        assert evil_host.status == 403
        assert json_only.status == 406
        assert put.status == 405
        assert put.headers["allow"] == "GET"
        assert get_messages.status == 405
        assert get_messages.headers["allow"] == "POST"
        assert client.app.legacy is not None
        assert len(client.app.legacy) == 0
        # No Accept header at all is fine (old clients send none).
        bare = client.start("GET", "/sse")
        assert (await bare.event(0)).event == "endpoint"


async def test_max_sessions_counts_legacy_sessions() -> None:
    async with running(limits=HttpServerLimits(max_sessions=1)) as client:
        await handshake(client)
        refused = client.start("GET", "/sse")
        await refused.finished()
        assert refused.status == 503
        assert "retry-after" in refused.headers


async def test_paths_are_configurable_and_honour_root_path() -> None:
    async with running(sse_path="/old/sse", messages_path="/old/messages") as client:
        default = client.start("GET", "/sse")
        await default.finished()
        assert default.status == 404
        stream = client.start("GET", "/old/sse", root_path="/api")
        first = await stream.event(0)
        assert first.event == "endpoint"
        assert first.data.startswith("/api/old/messages?session_id=")
        data = first.data.removeprefix("/api")
        accepted = await client.post(data, rpc(1, "initialize", LEGACY_INIT))
        assert accepted.status == 202
        assert json.loads((await stream.event(1)).data)["id"] == 1


@pytest.mark.parametrize("options", [{"legacy_sse": False}, {"stateless": True}])
async def test_legacy_sse_can_be_off(options: dict[str, Any]) -> None:
    async with running(**options) as client:
        assert client.app.legacy is None
        stream = client.start("GET", "/sse", headers={"accept": "text/event-stream"})
        await stream.finished()
        assert stream.status == 404


async def test_streamable_http_still_served_beside_it() -> None:
    async with running() as client:
        _, endpoint = await client.open_stream()
        legacy_id = endpoint.partition("=")[2]
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-session-id": legacy_id,
        }
        wrong = client.start("POST", "/mcp", rpc(1, "ping"), headers)
        await wrong.finished()
        assert wrong.status == 404  # a legacy id opens no Streamable HTTP session
        del headers["mcp-session-id"]
        init = client.start("POST", "/mcp", rpc(1, "initialize", LEGACY_INIT), headers)
        await init.finished()
        assert init.status == 200
        assert init.json["result"]["protocolVersion"] == "2024-11-05"


async def test_an_overflowing_stream_ends_the_session() -> None:
    limits = HttpServerLimits(stream_queue_events=3)
    closed: list[bool] = []
    channel = LegacySseChannel("s", limits, "/messages?session_id=s")
    channel.on_close = lambda: closed.append(True)
    note = Notification(method="notifications/message", params={"level": "info", "data": "x"})
    await channel.send(note)
    await channel.send(note)
    with pytest.raises(trio.BrokenResourceError):
        await channel.send(note)
    assert channel.closed
    assert closed == [True]
    assert channel.outbox.overflowed
    with pytest.raises(trio.ClosedResourceError):
        await channel.send(note)
    with pytest.raises(trio.ClosedResourceError):
        await channel.deliver(note)
    with pytest.raises(trio.EndOfChannel):
        await channel.receive()


async def test_python_sdk_sse_client_against_serve_http(engine: str) -> None:
    """The official SDK's ``sse_client`` (on anyio, here on Trio) over real sockets."""
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.sse import sse_client

    async def sampling(_context: Any, params: types.CreateMessageRequestParams) -> Any:
        prompt = params.messages[0].content
        assert isinstance(prompt, types.TextContent)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo {prompt.text}"),
            model="sdk-test",
        )

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    server = make_server()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: trimcp.serve_http(
                    server, port=0, engine=engine, task_status=task_status
                )
            )
            async with (
                sse_client(f"http://127.0.0.1:{port}/sse") as (read, write),
                ClientSession(read, write, sampling_callback=sampling) as session,
            ):
                init = await session.initialize()
                assert init.server_info.name == "http-test"
                tools = await session.list_tools()
                assert {"echo", "chatty", "ask"} <= {t.name for t in tools.tools}
                echo = await session.call_tool("echo", {"text": "hello"})
                assert echo.content == [types.TextContent(type="text", text="hello")]
                chatty = await session.call_tool(
                    "chatty", {"count": 3}, progress_callback=on_progress
                )
                assert isinstance(chatty.content[0], types.TextContent)
                assert chatty.content[0].text == "done"
                assert progress == [0, 1, 2]
                ask = await session.call_tool("ask", {"prompt": "hi"})
                assert isinstance(ask.content[0], types.TextContent)
                assert ask.content[0].text == "model said: echo hi"
                (live,) = server.sessions
            # The SDK closed its stream: the session ended on the server.
            await live.wait_closed()
            while server.sessions:
                await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()

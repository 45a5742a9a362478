"""MCP over WebSocket: trimcp's client and servers (lean wsproto, and ASGI under hypercorn),
bad input, refused handshakes and bounds. Real sockets on 127.0.0.1 only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from wsproto.events import TextMessage

import trimcp
from trimcp.protocol import CreateMessageResult, TextContent
from trimcp.transports.http import HostPolicy
from trimcp.transports.websocket import WebSocketChannel, accept_websocket

from ._raw import INIT, RawWebSocket, handshake


def make_server() -> trimcp.Server:
    server = trimcp.Server("ws-test", version="1.0")
    state: dict[str, Any] = {"started": trio.Event(), "cancelled": trio.Event()}
    server.test_state = state  # type: ignore[attr-defined]

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    async def chatty(ctx: trimcp.ToolContext, count: int = 3) -> str:
        """Report progress, then answer."""
        for i in range(count):
            await ctx.report_progress(i, count)
        return "done"

    @server.tool()
    async def ask(ctx: trimcp.ToolContext, prompt: str) -> str:
        """Ask the client's model (a reverse call over the same socket)."""
        result = await ctx.sample(prompt, max_tokens=10)
        return f"model said: {getattr(result.content, 'text', '?')}"

    @server.tool()
    async def park(ctx: trimcp.ToolContext) -> str:
        """Wait until cancelled."""
        state["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            state["cancelled"].set()
        return "unreachable"  # pragma: no cover

    return server


@asynccontextmanager
async def lean(server: trimcp.Server, **options: Any) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        port: int = await nursery.start(
            lambda task_status: trimcp.serve_websocket(
                server, port=0, task_status=task_status, **options
            )
        )
        yield port
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def on_http(server: trimcp.Server, engine: str, **options: Any) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        port: int = await nursery.start(
            lambda task_status: trimcp.serve_http(
                server, port=0, engine=engine, task_status=task_status, **options
            )
        )
        yield port
        nursery.cancel_scope.cancel()


async def sampling(ctx: object, params: trimcp.CreateMessageParams) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="yes"), model="m")


async def exercise(server: trimcp.Server, url: str) -> None:
    """Tools, progress, a reverse call and a cancelled call over one WebSocket session."""
    state = server.test_state  # type: ignore[attr-defined]
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with trimcp.open_client(
        trimcp.websocket(url), sampling=sampling, era="handshake"
    ) as client:
        assert client.server_info.name == "ws-test"
        assert {tool.name for tool in await client.list_all_tools()} >= {"echo", "park"}
        echo = await client.call_tool("echo", {"text": "héllo"})
        assert echo.content[0].text == "héllo"  # type: ignore[union-attr]
        chatty = await client.call_tool("chatty", {"count": 3}, on_progress=on_progress)
        assert chatty.content[0].text == "done"  # type: ignore[union-attr]
        ask = await client.call_tool("ask", {"prompt": "q"})
        assert ask.content[0].text == "model said: yes"  # type: ignore[union-attr]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.call_tool, "park", {})
            await state["started"].wait()
            nursery.cancel_scope.cancel()
        await state["cancelled"].wait()  # notifications/cancelled reached the handler
        assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"  # type: ignore[union-attr]
    assert progress == [0, 1, 2]


async def test_client_and_lean_server() -> None:
    server = make_server()
    with trio.fail_after(20):
        async with lean(server) as port:
            await exercise(server, f"ws://127.0.0.1:{port}/mcp")


@asynccontextmanager
async def accepting(server: trimcp.Server) -> AsyncIterator[tuple[int, list[Any], trio.Event]]:
    """A WebSocket server of the test's own on 127.0.0.1: each connection accepted by
    ``accept_websocket`` and served by ``server.serve_channel``. Yields the port, each
    connection's message I/O, and an event set once a session has ended."""
    served: list[Any] = []
    ended = trio.Event()

    async def handle(stream: trio.SocketStream) -> None:
        messages = await accept_websocket(
            stream,
            path="/mcp",
            host_policy=HostPolicy(loopback=True),
            local_host="127.0.0.1",
            limits=trimcp.WebSocketLimits(),
        )
        assert messages is not None
        served.append(messages)
        await server.serve_channel(WebSocketChannel(messages))
        ended.set()

    async with trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        nursery.start_soon(trio.serve_listeners, handle, listeners)
        yield listeners[0].socket.getsockname()[1], served, ended
        nursery.cancel_scope.cancel()


async def test_session_ends_when_the_client_closes() -> None:
    """The server's session ends by itself once the client closes (no task left behind)."""
    server = make_server()
    with trio.fail_after(20):
        async with accepting(server) as (port, _served, ended):
            async with trimcp.open_client(
                trimcp.websocket(f"ws://127.0.0.1:{port}/mcp"), era="handshake"
            ) as c:
                await c.call_tool("echo", {"text": "x"})
                assert len(server.sessions) == 1
            await ended.wait()
            assert not server.sessions


async def test_each_side_writes_through_a_writer_task_of_its_session() -> None:
    """Over wsproto both sessions hand their messages to a writer task of their own
    (queued without waiting for the write); the task ends with its session."""
    server = make_server()
    with trio.fail_after(20):
        async with accepting(server) as (port, served, ended):
            async with trimcp.open_client(
                trimcp.websocket(f"ws://127.0.0.1:{port}/mcp"), era="handshake"
            ) as client:
                channel = client.session.channel
                assert isinstance(channel, WebSocketChannel)
                mine = channel._io
                assert mine._batcher.writer  # type: ignore[attr-defined]
                assert served[0]._batcher.writer
                async with trio.open_nursery() as calls:
                    for n in range(20):
                        calls.start_soon(client.call_tool, "echo", {"text": str(n)})
                echo = await client.call_tool("echo", {"text": "last"})
                assert echo.content[0].text == "last"  # type: ignore[union-attr]
            assert not mine._batcher.writer  # type: ignore[attr-defined]
            await ended.wait()
            assert not served[0]._batcher.writer


ENGINES = pytest.mark.parametrize("engine", ["h11", "hypercorn"])


@ENGINES
async def test_client_and_the_http_endpoint(engine: str) -> None:
    """serve_http serves WebSocket on the Streamable HTTP endpoint, on both engines."""
    server = make_server()
    with trio.fail_after(20):
        async with on_http(server, engine) as port:
            await exercise(server, f"ws://127.0.0.1:{port}/mcp")
            # ... and Streamable HTTP on the same port, at the same time.
            transport = trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp")
            async with trimcp.open_client(transport, era="handshake") as client:
                echo = await client.call_tool("echo", {"text": "http"})
                assert echo.content[0].text == "http"  # type: ignore[union-attr]


@ENGINES
@pytest.mark.parametrize(
    "kwargs",
    [
        {"path": "/other"},
        {"subprotocols": ()},
        {"headers": ((b"origin", b"http://evil.example"),)},
        {"headers": ((b"origin", b"http://localhost:80@evil.example"),)},
        {"host": "localhost:80@evil.example"},
    ],
)
async def test_the_http_endpoint_refuses_bad_handshakes(
    engine: str, kwargs: dict[str, Any]
) -> None:
    with trio.fail_after(20):
        async with on_http(make_server(), engine) as port:
            status = await handshake(port, **kwargs)
            assert isinstance(status, int)
            assert 400 <= status < 500


async def test_h11_engine_bounds_websocket_messages() -> None:
    server = make_server()
    limits = trimcp.WebSocketLimits(max_message=4096)
    with trio.fail_after(20):
        async with on_http(server, "h11", websocket_limits=limits) as port:
            raw = await handshake(port)
            assert isinstance(raw, RawWebSocket)
            await raw.send_json(INIT)
            assert (await raw.receive_json())["result"]["serverInfo"]["name"] == "ws-test"
            await raw.send_text("{oops")
            assert (await raw.receive_json())["error"]["code"] == -32700
            await raw.send_text("x" * 5000)
            assert await raw.wait_closed() == 1009
            await raw.stream.aclose()


async def test_h11_engine_refuses_a_bad_websocket_version() -> None:
    with trio.fail_after(20):
        async with on_http(make_server(), "h11") as port:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(
                b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 8\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
            )
            reply = b""
            while chunk := await stream.receive_some(1000):
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 400")
            assert b"Sec-WebSocket-Version" in reply
            await stream.aclose()


async def test_bad_messages_are_answered_and_the_session_goes_on() -> None:
    server = make_server()
    with trio.fail_after(20):
        async with lean(server) as port:
            raw = await handshake(port)
            assert isinstance(raw, RawWebSocket)
            await raw.send_json(INIT)
            assert (await raw.receive_json())["id"] == 0
            await raw.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await raw.send_text("{not json")
            assert (await raw.receive_json())["error"]["code"] == -32700
            await raw.send_text('{"jsonrpc": "2.0", "id": 1}')
            assert (await raw.receive_json())["error"]["code"] == -32600
            await raw.send_text('[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]')
            answer = await raw.receive_json()  # no batches after 2025-03-26
            assert answer["error"]["code"] == -32600
            await raw.send_json({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            assert await raw.receive_json() == {"jsonrpc": "2.0", "id": 3, "result": {}}
            await raw.stream.aclose()


async def test_binary_message_closes_with_1003() -> None:
    server = make_server()
    with trio.fail_after(20):
        async with lean(server) as port:
            raw = await handshake(port)
            assert isinstance(raw, RawWebSocket)
            await raw.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
            assert await raw.wait_closed() == 1003
            await raw.stream.aclose()


async def test_oversized_message_closes_with_1009_and_others_are_untouched() -> None:
    server = make_server()
    limits = trimcp.WebSocketLimits(max_message=4096)
    with trio.fail_after(20):
        async with lean(server, limits=limits) as port:
            url = f"ws://127.0.0.1:{port}/mcp"
            async with trimcp.open_client(trimcp.websocket(url), era="handshake") as bystander:
                raw = await handshake(port)
                assert isinstance(raw, RawWebSocket)
                # Sent in several frames: the bound is on the whole message.
                for _ in range(3):
                    part = TextMessage(data="x" * 2000, message_finished=False)
                    await raw.stream.send_all(raw.ws.send(part))
                assert await raw.wait_closed() == 1009
                await raw.stream.aclose()
                echo = await bystander.call_tool("echo", {"text": "still here"})
                assert echo.content[0].text == "still here"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"path": "/other"}, 404),
        ({"subprotocols": ()}, 400),
        ({"headers": ((b"origin", b"http://evil.example"),)}, 403),
        ({"host": "evil.example"}, 403),
        ({"headers": ((b"origin", b"http://localhost:80@evil.example"),)}, 403),
        ({"host": "localhost:80@evil.example"}, 400),
    ],
)
async def test_refused_handshakes(kwargs: dict[str, Any], status: int) -> None:
    with trio.fail_after(20):
        async with lean(make_server()) as port:
            assert await handshake(port, **kwargs) == status


async def test_plain_http_and_slow_handshakes_are_refused() -> None:
    limits = trimcp.WebSocketLimits(handshake_timeout=0.5)
    with trio.fail_after(20):
        async with lean(make_server(), limits=limits) as port:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert (await stream.receive_some(1000)).startswith(b"HTTP/1.1 400")
            await stream.aclose()
            slow = await trio.open_tcp_stream("127.0.0.1", port)
            await slow.send_all(b"GET /mcp HTTP/1.1\r\n")
            reply = b""
            while chunk := await slow.receive_some(1000):
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 408")
            await slow.aclose()


async def test_connection_cap_answers_503() -> None:
    limits = trimcp.WebSocketLimits(max_connections=1)
    with trio.fail_after(20):
        async with lean(make_server(), limits=limits) as port:
            first = await handshake(port)
            assert isinstance(first, RawWebSocket)
            assert await handshake(port) == 503
            await first.stream.aclose()


async def test_client_reports_refusals_with_their_status() -> None:
    with trio.fail_after(20):
        async with lean(make_server()) as port:
            transport = trimcp.websocket(f"ws://127.0.0.1:{port}/nope")
            with pytest.raises(trimcp.WebSocketHandshakeError) as info:
                async with trimcp.open_client(transport, era="handshake"):
                    pass  # pragma: no cover
            assert info.value.status == 404
            assert "404" in str(info.value)


async def test_stateless_app_refuses_websocket() -> None:
    app = trimcp.asgi_app(make_server(), stateless=True)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    scope = {"type": "websocket", "path": "/mcp", "headers": [], "subprotocols": ["mcp"]}
    await app(scope, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]


async def test_server_going_away_fails_pending_calls() -> None:
    server = make_server()
    state = server.test_state  # type: ignore[attr-defined]
    with trio.fail_after(20):
        async with trio.open_nursery() as outer:
            serving = trio.CancelScope()

            async def run(task_status: trio.TaskStatus[int]) -> None:
                with serving:
                    await trimcp.serve_websocket(server, port=0, task_status=task_status)

            port = await outer.start(run)
            url = f"ws://127.0.0.1:{port}/mcp"
            async with (
                trimcp.open_client(trimcp.websocket(url), era="handshake") as c,
                trio.open_nursery() as nursery,
            ):

                async def call() -> None:
                    with pytest.raises(trimcp.ConnectionClosedError):
                        await c.call_tool("park", {})

                nursery.start_soon(call)
                await state["started"].wait()
                serving.cancel()
    assert state["cancelled"].is_set()  # the handler was cancelled with its session

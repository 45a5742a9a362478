"""A small scripted HTTP/1.1 server (h11 over Trio) on 127.0.0.1:0 for client tests.

The server runs in the test's nursery. Each request is handed to an *app*
``async (request, exchange) -> None`` that answers through :class:`Exchange` (JSON, a
status, an SSE stream event by event, an abrupt drop, or nothing at all). Keep-alive is
honoured; every request and connection is recorded with the (virtual) time it arrived.

:func:`mcp_app` builds an app that speaks enough MCP (initialize with a session id,
202 for notifications and responses, 405 for GET, 200 for DELETE) for a test to
override only the methods it is about.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import attrs
import h11
import trio

from trimcp.transports.http import HttpClientChannel, StreamableHttp
from trimcp.transports.http._client_conn import ConnectionPool, parse_url
from trimcp.wire import encode_sse

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "logging": {}},
    "serverInfo": {"name": "fake", "version": "1"},
}


@attrs.define
class FakeRequest:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    connection: int
    time: float

    @property
    def message(self) -> dict[str, Any]:
        value = json.loads(self.body) if self.body else {}
        assert isinstance(value, dict)
        return value

    @property
    def rpc_method(self) -> str | None:
        return self.message.get("method") if self.body else None


class Exchange:
    """Answering one request."""

    def __init__(self, stream: trio.abc.Stream, conn: h11.Connection) -> None:
        self.stream = stream
        self.conn = conn
        self.aborted = False

    async def _send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            await self.stream.send_all(data)

    async def respond(
        self, status: int, body: bytes = b"", headers: list[tuple[str, str]] | None = None
    ) -> None:
        all_headers = [*(headers or []), ("Content-Length", str(len(body)))]
        await self._send(h11.Response(status_code=status, headers=all_headers))
        if body:
            await self._send(h11.Data(data=body))
        await self._send(h11.EndOfMessage())

    async def json(
        self, obj: Any, status: int = 200, headers: list[tuple[str, str]] | None = None
    ) -> None:
        body = json.dumps(obj).encode()
        await self.respond(status, body, [("Content-Type", "application/json"), *(headers or [])])

    async def start_sse(self, headers: list[tuple[str, str]] | None = None) -> None:
        all_headers = [("Content-Type", "text/event-stream"), *(headers or [])]
        await self._send(h11.Response(status_code=200, headers=all_headers))

    async def event(
        self, data: Any = None, *, id: str | None = None, retry: int | None = None
    ) -> None:
        text = data if isinstance(data, str) or data is None else json.dumps(data)
        await self.raw(encode_sse(data=text, id=id, retry=retry))

    async def raw(self, data: bytes) -> None:
        await self._send(h11.Data(data=data))

    async def end(self) -> None:
        await self._send(h11.EndOfMessage())

    async def abort(self) -> None:
        """Drop the connection without finishing the response."""
        self.aborted = True
        await trio.aclose_forcefully(self.stream)


App = Callable[[FakeRequest, Exchange], Awaitable[None]]


class FakeServer:
    def __init__(self, app: App) -> None:
        self.app = app
        self.requests: list[FakeRequest] = []
        self.connections = 0
        self.disconnects = 0
        self.port = 0
        self.scheme = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/mcp"

    def of(self, method: str, rpc: str | None = None) -> list[FakeRequest]:
        """Recorded requests with HTTP ``method`` (and JSON-RPC method ``rpc``)."""
        return [
            r
            for r in self.requests
            if r.method == method and (rpc is None or (r.body and r.rpc_method == rpc))
        ]

    async def _read_request(
        self, stream: trio.abc.Stream, conn: h11.Connection, index: int
    ) -> FakeRequest | None:
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                conn.receive_data(data)
                continue
            if isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                headers = {k.decode().lower(): v.decode() for k, v in head.headers}
                return FakeRequest(
                    head.method.decode(),
                    head.target.decode(),
                    headers,
                    bytes(body),
                    index,
                    trio.current_time(),
                )
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def handle(self, stream: trio.abc.Stream) -> None:
        self.connections += 1
        index = self.connections
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await self._read_request(stream, conn, index)
                if request is None:
                    return
                self.requests.append(request)
                exchange = Exchange(stream, conn)
                await self.app(request, exchange)
                if exchange.aborted or conn.our_state is not h11.DONE:
                    return
                if conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError, OSError):
            self.disconnects += 1
        finally:
            await trio.aclose_forcefully(stream)


async def start_server(
    nursery: trio.Nursery, app: App, *, ssl_context: ssl.SSLContext | None = None
) -> FakeServer:
    server = FakeServer(app)
    if ssl_context is None:
        listeners = await nursery.start(partial(trio.serve_tcp, server.handle, 0, host="127.0.0.1"))
    else:
        server.scheme = "https"
        listeners = await nursery.start(
            partial(trio.serve_ssl_over_tcp, server.handle, 0, ssl_context, host="127.0.0.1")
        )
    listener = listeners[0]
    if isinstance(listener, trio.SSLListener):
        listener = listener.transport_listener
    server.port = listener.socket.getsockname()[1]
    return server


Handler = Callable[[FakeRequest, Exchange], Awaitable[None]]


async def _tools_call(request: FakeRequest, ex: Exchange) -> None:
    args = request.message["params"].get("arguments", {})
    text = f"sum={args.get('a', 0) + args.get('b', 0)}"
    await ex.json(result(request, {"content": [{"type": "text", "text": text}]}))


def result(request: FakeRequest, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request.message["id"], "result": value}


def mcp_app(
    methods: dict[str, Handler] | None = None,
    *,
    session_id: str | None = "s-1",
    on_get: Handler | None = None,
    on_delete: Handler | None = None,
) -> App:
    """An MCP-speaking app; ``methods`` override JSON-RPC methods (see the module doc)."""
    table = {"tools/call": _tools_call, **(methods or {})}

    async def app(request: FakeRequest, ex: Exchange) -> None:
        if request.method == "GET":
            await (on_get(request, ex) if on_get else ex.respond(405))
            return
        if request.method == "DELETE":
            await (on_delete(request, ex) if on_delete else ex.respond(200))
            return
        message = request.message
        method = message.get("method")
        if method in table:
            await table[method](request, ex)
        elif method == "initialize":
            headers = [("Mcp-Session-Id", session_id)] if session_id else []
            await ex.json(result(request, INIT_RESULT), headers=headers)
        elif "id" not in message or method is None:
            await ex.respond(202)
        elif method == "tools/list":
            await ex.json(result(request, {"tools": []}))
        else:
            await ex.json(result(request, {}))

    return app


def unconnected_channel(url: str) -> HttpClientChannel:
    """A client channel to ``url`` that has not connected (nothing listens there): for
    what the channel does without a server."""
    transport = StreamableHttp(url=url)
    pool = ConnectionPool(
        parse_url(transport.url),
        ssl_context=None,
        max_connections=1,
        max_idle=1,
        max_connecting=1,
        idle_timeout=1,
        connect_timeout=1,
        max_header_size=1024,
    )
    return HttpClientChannel(transport, pool)

"""Drive the Streamable HTTP ASGI app in-process with hand-built scope/receive/send."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

import trimcp
from trimcp.transports.http import StreamableHttpApp
from trimcp.wire import SSEDecoder, SSEEvent

INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}, "elicitation": {}},
    "clientInfo": {"name": "asgi-test", "version": "1"},
}
BASE = {
    "host": "127.0.0.1:8000",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}


def rpc(id: int | str | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    value: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        value["id"] = id
    if params is not None:
        value["params"] = params
    return json.dumps(value).encode()


class Exchange:
    """One request in flight: its response so far, read as it arrives."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.raw_headers: list[tuple[bytes, bytes]] = []
        self.body = b""
        self.complete = trio.Event()
        self.started = trio.Event()
        self.disconnect = trio.Event()
        self._changed = trio.Event()
        self._decoder = SSEDecoder()
        self._events: list[SSEEvent] = []
        self.event_ids: list[str] = []
        self.retry: int | None = None

    async def send(self, message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert self.status is None, "response started twice"
            self.status = message["status"]
            self.raw_headers = list(message.get("headers", []))
            self.headers = {k.decode().lower(): v.decode() for k, v in self.raw_headers}
            self.started.set()
        elif message["type"] == "http.response.body":
            assert self.status is not None
            assert not self.complete.is_set(), "body after the end"
            chunk = message.get("body", b"")
            self.body += chunk
            if self.headers.get("content-type") == "text/event-stream":
                for event in self._decoder.feed(chunk):
                    self._events.append(event)
                for line in chunk.decode().splitlines():
                    if line.startswith("id: "):
                        self.event_ids.append(line[4:])
                    if line.startswith("retry: "):
                        self.retry = int(line[7:])
            if not message.get("more_body", False):
                self.complete.set()
        self._changed.set()
        self._changed = trio.Event()

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def messages(self) -> list[Any]:
        return [json.loads(e.data) for e in self._events]

    async def wait_message(self, count: int = 1) -> list[Any]:
        while len(self._events) < count:
            if self.complete.is_set():
                raise AssertionError(f"stream ended with {len(self._events)} messages")
            await self._changed.wait()
        return self.messages


class AsgiClient:
    def __init__(self, app: StreamableHttpApp, nursery: trio.Nursery) -> None:
        self.app = app
        self.nursery = nursery
        self.session_id: str | None = None
        self.version = "2025-11-25"

    def headers(self, **extra: str) -> dict[str, str]:
        headers = dict(BASE)
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = self.version
        headers.update({k.replace("_", "-"): v for k, v in extra.items()})
        return headers

    def start(
        self,
        method: str,
        body: bytes | Iterable[bytes | None] = b"",
        headers: Mapping[str, str] | list[tuple[str, str]] | None = None,
        *,
        path: str = "/mcp",
        server: tuple[str, int] | None = ("127.0.0.1", 8000),
        client: tuple[str, int] = ("127.0.0.1", 50000),
    ) -> Exchange:
        exchange = Exchange()
        chunks = [body] if isinstance(body, bytes) else list(body)
        items = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
        framed = any(k.lower() in ("content-length", "transfer-encoding") for k, _ in items)
        if isinstance(body, bytes) and method == "POST" and body and not framed:
            items.append(("content-length", str(len(body))))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": [(k.lower().encode(), v.encode()) for k, v in items],
            "client": client,
            "server": server,
        }
        pending = list(chunks)

        async def receive() -> dict[str, Any]:
            if pending:
                chunk = pending.pop(0)
                if chunk is None:  # the client goes quiet until it disconnects
                    await exchange.disconnect.wait()
                    return {"type": "http.disconnect"}
                return {"type": "http.request", "body": chunk, "more_body": bool(pending)}
            await exchange.disconnect.wait()
            return {"type": "http.disconnect"}

        async def run() -> None:
            await self.app(scope, receive, exchange.send)
            exchange.complete.set()

        self.nursery.start_soon(run)
        return exchange

    async def request(
        self, method: str, body: bytes = b"", headers: Any = None, **kw: Any
    ) -> Exchange:
        exchange = self.start(method, body, self.headers() if headers is None else headers, **kw)
        with trio.fail_after(10):
            await exchange.complete.wait()
        return exchange

    async def post(self, body: bytes, **extra: str) -> Exchange:
        return await self.request("POST", body, self.headers(**extra))

    async def stalled_call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> Exchange:
        """Call ``tool`` and stop reading its response after the first body chunk (a
        client that went quiet); returns once everything else is idle."""
        params = {"name": tool, "arguments": arguments}
        call = self.start("POST", rpc(request_id, "tools/call", params), self.headers())
        stalled = trio.Event()
        original = call.send

        async def never_reads(message: Mapping[str, Any]) -> None:
            await original(message)
            if message["type"] == "http.response.body":
                stalled.set()
                await trio.sleep_forever()

        call.send = never_reads  # type: ignore[method-assign]
        with trio.fail_after(5):
            await stalled.wait()
            await trio.testing.wait_all_tasks_blocked()
        return call

    async def initialize(self, params: dict[str, Any] | None = None) -> Any:
        reply = await self.post(rpc(1, "initialize", params or INIT_PARAMS))
        assert reply.status == 200, reply.body
        self.session_id = reply.headers["mcp-session-id"]
        self.version = reply.json["result"]["protocolVersion"]
        done = await self.post(rpc(None, "notifications/initialized"))
        assert done.status == 202
        return reply.json


@asynccontextmanager
async def running(server: trimcp.Server, **options: Any) -> AsyncIterator[AsgiClient]:
    app = trimcp.asgi_app(server, **options)
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        yield AsgiClient(app, nursery)
        nursery.cancel_scope.cancel()

"""A raw HTTP/1.1 client for the stateless-era tests (h11 over a Trio TCP stream).

Only 127.0.0.1 is ever contacted. Every exchange is bounded by :data:`WAIT`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import h11
import trio

import trimcp
from trimcp.wire import SSEDecoder

from ._support import VERSION, meta

WAIT: Final = 10.0
NAME_KEYS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@asynccontextmanager
async def serving(server: trimcp.Server, engine: str) -> AsyncIterator[int]:
    """``serve_http`` on 127.0.0.1, an ephemeral port; stopped on exit."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: trimcp.serve_http(
                server, host="127.0.0.1", port=0, engine=engine, task_status=task_status
            )
        )
        yield port
        nursery.cancel_scope.cancel()


def stateless_headers(method: str, params: dict[str, Any] | None) -> dict[str, str]:
    """The headers a conforming stateless client sends with this request."""
    headers = {"mcp-protocol-version": VERSION, "mcp-method": method}
    key = NAME_KEYS.get(method)
    if key and params and isinstance(params.get(key), str):
        headers["mcp-name"] = params[key]
    return headers


class Reply:
    """One HTTP response: status, headers, and the JSON-RPC messages of its body."""

    def __init__(self, status: int, headers: dict[str, str], messages: list[dict[str, Any]]):
        self.status = status
        self.headers = headers
        self.messages = messages

    @property
    def last(self) -> dict[str, Any]:
        return self.messages[-1]


class Exchange:
    """A POST in flight: read its SSE events one at a time, or to the end."""

    def __init__(self, stream: trio.SocketStream, conn: h11.Connection) -> None:
        self.stream = stream
        self.conn = conn
        self.status = 0
        self.headers: dict[str, str] = {}
        self.decoder = SSEDecoder()
        self.pending: list[dict[str, Any]] = []
        self.raw = b""
        self.done = False

    async def _event(self) -> Any:
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                data = await self.stream.receive_some(65536)
                self.conn.receive_data(data)
                continue
            return event

    async def start(self) -> None:
        event = await self._event()
        assert isinstance(event, h11.Response), event
        self.status = event.status_code
        self.headers = {k.decode().lower(): v.decode() for k, v in event.headers}

    @property
    def is_sse(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")

    async def next_message(self) -> dict[str, Any] | None:
        """The next JSON-RPC message of the body (``None`` at its end)."""
        while not self.pending and not self.done:
            event = await self._event()
            if isinstance(event, h11.Data):
                if self.is_sse:
                    for sse in self.decoder.feed(bytes(event.data)):
                        if sse.data:
                            self.pending.append(json.loads(sse.data))
                else:
                    self.raw += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                self.done = True
                if self.raw:
                    self.pending.append(json.loads(self.raw))
        return self.pending.pop(0) if self.pending else None

    async def rest(self) -> Reply:
        messages = []
        while (message := await self.next_message()) is not None:
            messages.append(message)
        return Reply(self.status, self.headers, messages)


@asynccontextmanager
async def open_post(
    port: int, body: dict[str, Any], headers: dict[str, str]
) -> AsyncIterator[Exchange]:
    """POST ``body`` to /mcp with ``headers``; the open exchange (closed on exit)."""
    data = json.dumps(body).encode()
    all_headers = {
        "host": f"127.0.0.1:{port}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "content-length": str(len(data)),
        "connection": "close",
        **headers,
    }
    conn = h11.Connection(h11.CLIENT)
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        request = h11.Request(method="POST", target="/mcp", headers=list(all_headers.items()))
        await stream.send_all(conn.send(request) + conn.send(h11.Data(data=data)))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        exchange = Exchange(stream, conn)
        with trio.fail_after(WAIT):
            await exchange.start()
        yield exchange


async def post(port: int, body: dict[str, Any], headers: dict[str, str]) -> Reply:
    async with open_post(port, body, headers) as exchange:
        with trio.fail_after(WAIT):
            return await exchange.rest()


def request(
    id: int | str, method: str, params: dict[str, Any] | None = None, **meta_args: Any
) -> dict[str, Any]:
    """A stateless-era request body (``_meta`` from :func:`meta`)."""
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {**(params or {}), "_meta": meta(**meta_args)},
    }


async def call(
    port: int, id: int | str, method: str, params: dict[str, Any] | None = None, **meta_args: Any
) -> Reply:
    """A conforming stateless request: body and headers agree."""
    body = request(id, method, params, **meta_args)
    return await post(port, body, stateless_headers(method, body["params"]))


async def bodiless(port: int, method: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    """A GET or DELETE to /mcp: its status and headers."""
    conn = h11.Connection(h11.CLIENT)
    all_headers = {
        "host": f"127.0.0.1:{port}",
        "accept": "text/event-stream",
        "connection": "close",
        **headers,
    }
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            request = h11.Request(method=method, target="/mcp", headers=list(all_headers.items()))
            await stream.send_all(conn.send(request) + conn.send(h11.EndOfMessage()))
            exchange = Exchange(stream, conn)
            await exchange.start()
            await exchange.rest()
    return exchange.status, exchange.headers

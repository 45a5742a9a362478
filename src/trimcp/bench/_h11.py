"""A lean Streamable HTTP client (h11 over Trio sockets) driving any MCP server.

It does what any MCP client over HTTP must and nothing more: one ``initialize`` and
``notifications/initialized`` per run, then each ``tools/call`` as one keep-alive
``POST`` carrying the session id, its answer read as JSON or as an SSE stream
(whichever the server chose) and matched by id. Each concurrent caller has a
connection of its own (opened on first use, kept for the run unless the server closes
it, then replaced), so the client never queues. With the client this thin,
``raw-trimcp`` against ``raw-sdk`` compares the servers; against ``trimcp`` / ``sdk``
it shows what each stack's own client costs. A parked call that is cancelled sends
``notifications/cancelled`` on a connection of its own and drops its connection.

In the stateless era (``era="stateless"``) there is no ``initialize`` and no session:
every POST carries the stamped ``_meta`` (:func:`._era.stamp`) and the era's headers
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``); a cancelled call just closes
its connection (the 2026-07-28 HTTP transport's cancellation: the server must treat the
disconnect as one); and the client answers ``input_required`` rounds, so the fan-out
metric works over HTTP too.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import h11
import trio

from ._core import Target, Workload
from ._era import http_headers, stamp
from ._ndjson import PROTOCOL_VERSION, raw_target

__all__ = ["H11Client", "connect_url"]


class _Connection:
    """One keep-alive HTTP/1.1 connection, one exchange at a time."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT)
        self.reusable = True

    async def post(
        self, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[h11.Response, bytes]:
        conn = self.h11
        request = h11.Request(
            method="POST",
            target=target,
            headers=[*headers, ("content-length", str(len(body)))],
        )
        await self.stream.send_all(
            conn.send(request) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        response: h11.Response | None = None
        chunks: list[bytes] = []
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("server closed the connection mid-answer")
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
        else:  # the server closes it (Hypercorn does every 1000 requests by default)
            self.reusable = False
        assert response is not None
        return response, b"".join(chunks)


def _answer(response: h11.Response, body: bytes, request_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to ``request_id`` in a JSON or SSE body."""
    if response.status_code != 200:
        raise AssertionError(f"HTTP {response.status_code}: {body[:200]!r}")
    kind = next((v for k, v in response.headers if k == b"content-type"), b"")
    if kind.startswith(b"application/json"):
        message: dict[str, Any] = json.loads(body)
        return message
    for line in body.split(b"\n"):
        if line.startswith(b"data:") and line[5:].strip():  # not a priming event
            message = json.loads(line[5:])
            if message.get("id") == request_id:
                return message
    raise AssertionError(f"no answer to {request_id} in {body[:200]!r}")


class H11Client:
    """Keep-alive connections to one MCP endpoint, one exchange each at a time."""

    def __init__(self, url: str, era: str = "handshake") -> None:
        self.stateless = era == "stateless"
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.path = parts.path or "/"
        self.headers = [
            ("host", f"{self.host}:{self.port}"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
        ]
        self.idle: list[_Connection] = []
        self.opened: set[_Connection] = set()
        self.ids = itertools.count(1)

    async def _open(self) -> _Connection:
        connection = _Connection(await trio.open_tcp_stream(self.host, self.port))
        self.opened.add(connection)
        return connection

    async def _drop(self, connection: _Connection) -> None:
        self.opened.discard(connection)
        await connection.stream.aclose()

    async def post(
        self,
        message: dict[str, Any],
        *,
        keep: bool = True,
        extra: list[tuple[str, str]] | None = None,
    ) -> tuple[h11.Response, bytes]:
        """POST ``message`` (with ``extra`` headers); ``keep``: return the connection to
        the idle pool after."""
        connection = self.idle.pop() if self.idle else await self._open()
        headers = self.headers if extra is None else [*self.headers, *extra]
        try:
            response, body = await connection.post(self.path, headers, json.dumps(message).encode())
        except BaseException:
            with trio.CancelScope(shield=True):
                await self._drop(connection)
            raise
        if connection.reusable and keep:
            self.idle.append(connection)
        else:
            await self._drop(connection)
        return response, body

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; on cancellation, tell the server on another connection."""
        request_id = next(self.ids)
        extra = None
        if self.stateless:
            params = stamp(params)
            extra = http_headers(method, params)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        try:
            response, body = await self.post(message, extra=extra)
        except trio.Cancelled:
            if self.stateless:  # post() dropped the connection: that is the cancellation
                raise
            note = {"method": "notifications/cancelled", "params": {"requestId": request_id}}
            with trio.CancelScope(shield=True):
                await self.post({"jsonrpc": "2.0", **note}, keep=False)
            raise
        return _answer(response, body, request_id)

    async def initialize(self) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "trimcp-bench", "version": "1.0"},
            },
        }
        response, body = await self.post(init)
        negotiated = _answer(response, body, 0)["result"]["protocolVersion"]
        session = next((v.decode() for k, v in response.headers if k == b"mcp-session-id"), None)
        self.headers.append(("mcp-protocol-version", negotiated))
        if session is not None:
            self.headers.append(("mcp-session-id", session))
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        response, body = await self.post(note)
        if response.status_code not in (200, 202):
            raise AssertionError(f"initialized: HTTP {response.status_code}")

    async def aclose(self) -> None:
        for connection in list(self.opened):
            await self._drop(connection)


@asynccontextmanager
async def connect_url(
    url: str, workload: Workload, *, ours: bool, era: str = "handshake"
) -> AsyncIterator[Target]:
    """Initialize at ``url`` (handshake era) and yield a target; ``ours``: the server
    has the benchmark tools (park, stats; in the handshake era the fan-out needs
    server-to-client requests, which this client does not answer over HTTP, while in
    the stateless era it is input rounds on the call's own POSTs)."""
    client = H11Client(url, era)
    try:
        if not client.stateless:
            await client.initialize()
        yield await raw_target(client.request, workload, ours=ours, fanout=client.stateless)
    finally:
        with trio.CancelScope(shield=True):
            await client.aclose()

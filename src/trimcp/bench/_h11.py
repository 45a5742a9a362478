"""A lean Streamable HTTP client (h11 over Trio sockets) driving any MCP server.

It does what any MCP client over HTTP must and nothing more: one ``initialize`` and
``notifications/initialized`` per run, then each ``tools/call`` as one keep-alive
``POST`` carrying the session id, its answer read as JSON or as an SSE stream
(whichever the server chose) and matched by id. Each concurrent caller has a
connection of its own (opened on first use, kept for the run unless the server closes
it, then replaced), so the client never queues; or, with ``max_connections``, at most
that many, handed on in the order callers asked (the ``floor-hypercorn`` client holds
as many as trimcp's client does: hypercorn's cost per request grows with the
connections it serves). With the client this thin,
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
from collections import deque
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


class _Waiter:
    """A caller waiting for a connection: handed one, or ``None`` (a slot to open)."""

    __slots__ = ("connection", "event")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.connection: _Connection | None = None


class H11Client:
    """Keep-alive connections to one MCP endpoint, one exchange each at a time; at most
    ``max_connections`` open (``None``: one per concurrent caller)."""

    def __init__(
        self, url: str, era: str = "handshake", max_connections: int | None = None
    ) -> None:
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
        self.max_connections = max_connections
        #: Connections open or being opened.
        self.slots = 0
        self.waiting: deque[_Waiter] = deque()

    async def _checkout(self) -> _Connection:
        """An idle connection, a new one if a slot is free, else the next one given back."""
        if self.idle:
            return self.idle.pop()
        if self.max_connections is None or self.slots < self.max_connections:
            return await self._open()
        waiter = _Waiter()
        self.waiting.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.event.is_set():  # handed a connection or slot as it was cancelled
                self._checkin(waiter.connection)
            else:
                self.waiting.remove(waiter)
            raise
        return waiter.connection or await self._open(reserve=False)

    def _checkin(self, connection: _Connection | None) -> None:
        """Give ``connection`` back (``None``: the slot of one dropped) to the first
        waiting caller, else to the idle pool (or free the slot)."""
        if self.waiting:
            waiter = self.waiting.popleft()
            waiter.connection = connection
            waiter.event.set()
        elif connection is not None:
            self.idle.append(connection)
        else:
            self.slots -= 1

    async def _open(self, *, reserve: bool = True) -> _Connection:
        """Open a connection, in a new slot or (``reserve=False``) one handed over."""
        if reserve:
            self.slots += 1
        try:
            connection = _Connection(await trio.open_tcp_stream(self.host, self.port))
        except BaseException:
            self._checkin(None)
            raise
        self.opened.add(connection)
        return connection

    async def _drop(self, connection: _Connection) -> None:
        """Close ``connection``; its slot goes to the next caller waiting."""
        self.opened.discard(connection)
        self._checkin(None)
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
        return await self._exchange(await self._checkout(), message, keep=keep, extra=extra)

    async def _exchange(
        self,
        connection: _Connection,
        message: dict[str, Any],
        *,
        keep: bool = True,
        extra: list[tuple[str, str]] | None = None,
    ) -> tuple[h11.Response, bytes]:
        """:meth:`post` on a connection checked out already."""
        headers = self.headers if extra is None else [*self.headers, *extra]
        try:
            response, body = await connection.post(self.path, headers, json.dumps(message).encode())
        except BaseException:
            with trio.CancelScope(shield=True):
                await self._drop(connection)
            raise
        if connection.reusable and keep:
            self._checkin(connection)
        else:
            await self._drop(connection)
        return response, body

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; cancelled once sent, tell the server on another connection."""
        request_id = next(self.ids)
        extra = None
        if self.stateless:
            params = stamp(params)
            extra = http_headers(method, params)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        connection = await self._checkout()  # cancelled while waiting: nothing was sent
        try:
            response, body = await self._exchange(connection, message, extra=extra)
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
    url: str,
    workload: Workload,
    *,
    ours: bool,
    era: str = "handshake",
    max_connections: int | None = None,
) -> AsyncIterator[Target]:
    """Initialize at ``url`` (handshake era) and yield a target; ``ours``: the server
    has the benchmark tools (park, stats; in the handshake era the fan-out needs
    server-to-client requests, which this client does not answer over HTTP, while in
    the stateless era it is input rounds on the call's own POSTs); ``max_connections``:
    see :class:`H11Client`."""
    client = H11Client(url, era, max_connections)
    try:
        if not client.stateless:
            await client.initialize()
        yield await raw_target(client.request, workload, ours=ours, fanout=client.stateless)
    finally:
        with trio.CancelScope(shield=True):
            await client.aclose()

"""WebSocket for the benchmark: the floor's bare server and the lean raw client.

Both ends are as thin as the NDJSON ones (:mod:`._ndjson`, :mod:`._floor`): a
WebSocket text message is a line. :func:`text_messages` reads the socket and yields
each whole text message (answering pings, ending at the peer's close frame);
:func:`frame_writer` turns queued lines into text frames, batching what is already
queued into one write, as :func:`._ndjson.writer` does for bytes. Text frames are
written and read with the same helpers as trimcp's transport
(:func:`trimcp.transports.websocket.text_frame`, :class:`~trimcp.transports.websocket.FrameReader`),
every other frame with wsproto, so the floor frames no slower than trimcp. On top:

* :func:`serve_floor_websocket`: the floor (:class:`._floor.FloorServer`) on
  ``ws://127.0.0.1:PORT/mcp``, one :class:`FloorServer` per connection, the same
  dispatcher (a task per request, with its own cancel scope) as over memory and stdio;
  it accepts any path and picks the ``mcp`` subprotocol when offered. No MCP.
* :func:`connect_websocket`: :class:`._ndjson.LineClient` over one connection (the
  handshake offers ``mcp``), driving any MCP server at a ``ws://`` URL: the floor,
  trimcp's ``serve_websocket``, or an external one. Cancelled calls send
  ``notifications/cancelled`` over the same socket, like every client. A connection
  that ends under the client fails the run (:class:`ConnectionError`) instead of
  leaving its callers waiting.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeAlias
from urllib.parse import urlsplit

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Event,
    Ping,
    RejectConnection,
    Request,
    TextMessage,
)
from wsproto.utilities import RemoteProtocolError

from trimcp.transports.websocket import FrameReader, MaskingKeys, at_frame_boundary, text_frame

from ._core import Target, Workload
from ._floor import FloorServer
from ._ndjson import BUFFER, LineClient

__all__ = ["connect_websocket", "frame_writer", "serve_floor_websocket", "text_messages"]

#: Bytes asked of the socket per read.
RECEIVE = 65536
#: The largest text frame read whole (trimcp's default ``max_message``).
MAX_FRAME = 4 * 1024 * 1024
#: The subprotocol MCP clients offer.
SUBPROTOCOL = "mcp"
#: What a writer task sends: a line (one text message) or a control event (pong, close).
Outgoing: TypeAlias = str | Event


async def text_messages(
    stream: trio.SocketStream,
    ws: WSConnection,
    pending: deque[Event],
    control: Callable[[Event], Awaitable[None]],
) -> AsyncIterator[str]:
    """Each whole text message read, until the peer closes (or the socket ends).

    ``pending``: events wsproto produced during the handshake. Pings and the close are
    answered through ``control`` (the writer's queue: one task writes the socket).
    """
    parts: list[str] = []
    reader = FrameReader(  # a larger text frame goes to wsproto, which yields it in parts
        masked=not ws.client, max_payload=MAX_FRAME, active=not pending and at_frame_boundary(ws)
    )
    queue: deque[Event | str] = deque(pending)  # and text messages the reader took
    while True:
        while queue:
            event = queue.popleft()
            if isinstance(event, str):
                yield event
            elif isinstance(event, TextMessage):
                if event.message_finished and not parts:
                    yield event.data
                    continue
                parts.append(event.data)
                if event.message_finished:
                    yield "".join(parts)
                    parts = []
            elif isinstance(event, Ping):
                await control(event.response())
            elif isinstance(event, CloseConnection):
                await control(event.response())
                return
        data = await stream.receive_some(RECEIVE)
        if not data:
            return
        for item in reader.feed(data):
            if isinstance(item, str):
                queue.append(item)
            else:
                ws.receive_data(item)
                queue.extend(ws.events())


def _frames(ws: WSConnection, keys: MaskingKeys | None, items: list[Outgoing]) -> bytes:
    out = []
    for item in items:
        if isinstance(item, str):
            text = item.rstrip("\n")  # a line's terminator is not part of the message
            if text:
                out.append(text_frame(text.encode(), keys.next() if keys is not None else None))
        else:
            out.append(ws.send(item))
    return b"".join(out)


async def frame_writer(
    stream: trio.abc.SendStream, ws: WSConnection, outbox: trio.MemoryReceiveChannel[Outgoing]
) -> None:
    """Write each queued line as a text message, batching what is already queued."""
    keys = MaskingKeys() if ws.client else None
    async for item in outbox:
        items = [item]
        while len(items) < 256:
            try:
                items.append(outbox.receive_nowait())
            except trio.WouldBlock:
                break
        data = _frames(ws, keys, items)
        if data:
            await stream.send_all(data)


async def _close(stream: trio.SocketStream, ws: WSConnection) -> None:
    """Send a close frame if the connection is still open, then drop the socket."""
    with trio.move_on_after(2) as scope:
        scope.shield = True
        try:
            if ws.state is ConnectionState.OPEN:
                await stream.send_all(ws.send(CloseConnection(code=1000)))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    await trio.aclose_forcefully(stream)


async def serve_floor_websocket(
    *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """The floor over WebSocket on 127.0.0.1 (a free port, reported) until cancelled."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(_floor_connection, listeners)


async def _floor_connection(stream: trio.SocketStream) -> None:
    ws = WSConnection(ConnectionType.SERVER)
    pending: deque[Event] = deque()
    try:
        while not pending:
            data = await stream.receive_some(RECEIVE)
            if not data:
                return
            ws.receive_data(data)
            pending.extend(ws.events())
        request = pending.popleft()
        if not isinstance(request, Request):
            return
        chosen = SUBPROTOCOL if SUBPROTOCOL in request.subprotocols else None
        await stream.send_all(ws.send(AcceptConnection(subprotocol=chosen)))
        outbox, queued = trio.open_memory_channel[Outgoing](BUFFER)
        server = FloorServer(outbox.send)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(frame_writer, stream, ws, queued)
            await server.serve(text_messages(stream, ws, pending, outbox.send))
            await outbox.aclose()  # the writer sends what is queued (the close answer), ends
    except* (trio.BrokenResourceError, trio.ClosedResourceError, RemoteProtocolError):
        pass  # the client went away or spoke badly: this connection ends, the server goes on
    finally:
        await trio.aclose_forcefully(stream)


async def _open(url: str) -> tuple[trio.SocketStream, WSConnection, deque[Event]]:
    parts = urlsplit(url)
    if parts.scheme != "ws" or not parts.hostname:
        raise ValueError(f"the raw WebSocket client takes a ws:// URL, got {url!r}")
    stream = await trio.open_tcp_stream(parts.hostname, parts.port or 80)
    ws = WSConnection(ConnectionType.CLIENT)
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    pending: deque[Event] = deque()
    try:
        request = Request(host=parts.netloc, target=resource, subprotocols=[SUBPROTOCOL])
        await stream.send_all(ws.send(request))
        while not pending:
            data = await stream.receive_some(RECEIVE)
            if not data:
                raise ConnectionError(f"{url} closed the connection during the handshake")
            ws.receive_data(data)
            pending.extend(ws.events())
        answer = pending.popleft()
        if isinstance(answer, RejectConnection):
            raise ConnectionError(f"{url} refused the WebSocket handshake: {answer.status_code}")
        if not isinstance(answer, AcceptConnection):
            raise ConnectionError(f"unexpected handshake answer {answer!r}")
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream, ws, pending


@asynccontextmanager
async def connect_websocket(url: str, workload: Workload, *, ours: bool) -> AsyncIterator[Target]:
    """Initialize over one connection to ``url`` and yield a target; ``ours``: the
    server has the benchmark tools (park, stats, fan-out; the client answers the
    sampling calls)."""
    stream, ws, pending = await _open(url)
    outbox, queued = trio.open_memory_channel[Outgoing](BUFFER)
    client = LineClient(outbox.send)

    async def read() -> None:
        await client.read(text_messages(stream, ws, pending, outbox.send))
        raise ConnectionError(f"{url} closed the connection")

    async def write() -> None:
        try:
            await frame_writer(stream, ws, queued)
        finally:
            # Callers cancelled once the connection is gone send notifications/cancelled
            # (shielded): with nobody writing, that must fail, not wait for ever.
            queued.close()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(write)
            nursery.start_soon(read)
            await client.initialize()
            try:
                yield await client.target(workload, ours=ours)
            finally:
                nursery.cancel_scope.cancel()
    finally:
        await _close(stream, ws)

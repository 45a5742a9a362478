"""Whole WebSocket messages over a Trio byte stream, with wsproto doing the protocol
(whole text frames, the one kind MCP uses, are written and read by :mod:`._framing`,
which hands wsproto every other frame).

:class:`WsprotoMessages` is the one place that turns frames into messages: it joins
fragments (bounded by ``max_message``), answers pings as soon as they are read (also
while nobody takes messages: a bounded read-ahead), keeps the connection alive without
mistaking its own backpressure for a dead peer, completes the closing handshake, and
serialises writes, coalescing the frames queued meanwhile into one socket write.
The client and the lean server both use it; an ASGI server has its own (see
:mod:`._asgi`). Both satisfy :class:`MessageIO`, which is all
:class:`~trimcp.transports.websocket.WebSocketChannel` needs.
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final, Protocol, final

import trio
from wsproto import WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    Pong,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError as WsLocalProtocolError
from wsproto.utilities import RemoteProtocolError as WsRemoteProtocolError

from .._batch import WriteBatcher
from .._direct import send, write_now
from ._framing import FrameReader, MaskingKeys, at_frame_boundary, text_frame
from ._limits import WebSocketLimits
from ._liveness import Liveness

__all__ = [
    "CLOSE_NORMAL",
    "CLOSE_PROTOCOL_ERROR",
    "CLOSE_TOO_BIG",
    "CLOSE_UNSUPPORTED",
    "MessageIO",
    "MessageTooBig",
    "WsprotoMessages",
]

logger = logging.getLogger("trimcp.websocket")

CLOSE_NORMAL: Final = 1000
CLOSE_PROTOCOL_ERROR: Final = 1002
CLOSE_UNSUPPORTED: Final = 1003
CLOSE_TOO_BIG: Final = 1009


class MessageTooBig(Exception):
    """A message grew past ``max_message``; the connection was closed with 1009."""


class MessageIO(Protocol):
    """Whole WebSocket messages in both directions.

    ``receive`` returns the next message (``str`` for text, ``bytes`` for binary) and
    raises :class:`trio.EndOfChannel` once the peer closed, or
    :class:`trio.BrokenResourceError` when the connection broke. ``close`` starts (or
    completes) the closing handshake and releases the connection; it never raises.
    """

    async def send_text(self, text: str) -> None: ...

    async def receive(self) -> str | bytes: ...

    async def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None: ...


@final
class WsprotoMessages:
    """:class:`MessageIO` over an open wsproto connection and the stream under it.

    Args:
      stream: the TCP (or TLS) stream, owned from now on.
      ws: the wsproto connection, past its handshake.
      limits: ``max_message``, ``receive_size``, ``read_ahead``, the keep-alive and
        ``close_timeout`` apply.
      pending: events wsproto produced during the handshake and not yet handled.

    Reading is done by whoever needs it, one reader at a time: :meth:`receive` when
    its caller wants a message, and :meth:`run`'s read-ahead while nobody does (up to
    ``read_ahead`` bytes of messages nobody took yet). Pings are answered and pongs
    noted as soon as they are read, so a peer's keep-alive is answered while this side
    is busy, and this side's own keep-alive never mistakes its backpressure for a dead
    peer (:mod:`._liveness`).
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        ws: WSConnection,
        limits: WebSocketLimits,
        pending: deque[Event] | None = None,
    ) -> None:
        self._stream = stream
        self._ws = ws
        self._limits = limits
        #: Events to hand out; a ``str`` is a whole text message :class:`FrameReader` read.
        self._pending: deque[Event | str] = deque()
        #: Bytes of message frames in ``_pending``, which the read-ahead stops at.
        self._buffered = 0
        self._batcher = WriteBatcher(self._write_batch, self._check_broken)
        self._broken = False
        self._parts: list[str | bytes] = []
        self._size = 0
        self._closed = False
        self._read_lock = trio.Lock()
        #: Why reading ended (re-raised to every later reader), once it did.
        self._ended: str | None = None
        #: Set when the read-ahead, waiting for room, may read again.
        self._room: trio.Event | None = None
        self.liveness = Liveness()
        self._pings = 0
        #: A client masks its frames (RFC 6455 section 5.3); a server does not.
        self._keys = MaskingKeys() if ws.client else None
        #: wsproto's state is OPEN (kept here: it changes only where wsproto sends or
        #: reads a frame, and every message sent asks it, two Python calls each time).
        self._open = ws.state is ConnectionState.OPEN
        self._reader = FrameReader(
            masked=not ws.client,
            max_payload=limits.max_message,
            active=not pending and at_frame_boundary(ws),
        )
        for event in pending or ():
            self._queue(event)  # a ping among them is answered by receive()

    async def _write(self, event: Event) -> None:
        """Send ``event``'s frame; one socket write carries every frame queued by then
        (see :mod:`trimcp.transports._batch`).

        A batch whose write fails or is interrupted may be partly sent: the byte stream
        can no longer be trusted, so the connection is dropped and its other writers
        fail too.
        """
        self._check_broken()
        try:
            frame = self._ws.send(event)
        except WsLocalProtocolError as exc:  # the connection is closing or closed
            raise trio.ClosedResourceError(str(exc)) from None
        finally:
            self._open = self._ws.state is ConnectionState.OPEN
        await self._batcher.submit(frame)

    def interrupt_send(self, task: trio.lowlevel.Task, error: BaseException) -> bool:
        """Withdraw ``task``'s frame if it still waits to be written, and make its send
        raise ``error`` (see :meth:`trimcp.transports._batch.WriteBatcher.interrupt`)."""
        return self._batcher.interrupt(task, error)

    def _check_broken(self) -> None:
        if self._broken:
            raise trio.BrokenResourceError("the WebSocket connection broke")

    async def _write_batch(self, batch: bytes) -> None:
        """Write ``batch`` whole, within ``send_timeout``.

        What the socket takes at once is written before any cancellation point (see
        :mod:`trimcp.transports._direct`), then a scheduler round passes that no
        cancellation interrupts: a writer task woken with frames to write and then
        cancelled with its session still writes them, and the connection can still be
        closed with a close frame. A write that has to wait can be cut short (it fails,
        times out, or is cancelled): the connection is then dropped, and the batch's
        other senders fail too.
        """
        limit = self._limits.send_timeout
        try:
            try:
                sent = write_now(self._stream, batch)
                if sent == len(batch):
                    await trio.lowlevel.cancel_shielded_checkpoint()
                    return
                written = await send(self._stream, batch[sent:] if sent else batch, timeout=limit)
            except OSError as exc:  # a reset or a broken pipe, as send_all would say
                raise trio.BrokenResourceError(str(exc)) from exc
            if not written:
                raise trio.BrokenResourceError(
                    f"a write took over {limit:g} s: the peer stopped reading"
                )
        except BaseException:
            self._broken = True
            await self._release()
            raise

    async def send_text(self, text: str) -> None:
        await self.send_utf8(text.encode("utf-8"))

    async def send_utf8(self, data: bytes) -> None:
        """:meth:`send_text` for text already encoded (``data`` is valid UTF-8): the
        frame is written by :func:`._framing.text_frame`, as wsproto would write it."""
        await self._batcher.submit(self._text_frame(data))

    def put_utf8(self, data: bytes) -> int:
        """Queue the text message ``data`` (valid UTF-8) for the writer task without
        waiting, and return the key :meth:`withdraw` takes (see
        :meth:`trimcp.transports._batch.WriteBatcher.put`); :class:`trio.WouldBlock`
        without a writer task or past its bound of unwritten bytes (then
        :meth:`send_utf8` it)."""
        batcher = self._batcher
        if not batcher.writer:  # (``put`` checks again; this saves framing a refused one)
            raise trio.WouldBlock
        return batcher.put(self._text_frame(data))

    def _text_frame(self, data: bytes) -> bytes:
        """The frame of the text message ``data``, once the connection can take one
        (the checks inline: every message sent passes here)."""
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket is closed")
        if self._broken:
            raise trio.BrokenResourceError("the WebSocket connection broke")
        if not self._open:  # wsproto would refuse it too
            raise trio.ClosedResourceError(f"the WebSocket is {self._ws.state.name.lower()}")
        keys = self._keys
        return text_frame(data, keys.next() if keys is not None else None)

    def withdraw(self, key: int) -> bool:
        """Take back a message :meth:`put_utf8` queued if the writer did not take it yet
        (``True``: it will never be written)."""
        return self._batcher.withdraw(key)

    def start_writer(self, spawn: Callable[[Callable[[], Awaitable[None]]], object]) -> bool:
        """Let a writer task of ``spawn``'s nursery (a session's) make the writes from
        now on, so that :meth:`put_utf8` queues without waiting for them."""
        return self._batcher.start_writer(spawn)

    # ------------------------------------------------------------------ reading
    async def _next_event(self) -> Event | str:
        while not self._pending:
            async with self._read_lock:
                if not self._pending:  # nobody filled it while this one waited
                    await self._fill()
        event = self._pending.popleft()
        if isinstance(event, str | TextMessage | BytesMessage):
            self._buffered -= len(event) if isinstance(event, str) else len(event.data)
            if self._room is not None and self._buffered < self._limits.read_ahead:
                self._room.set()
        return event

    async def _fill(self) -> None:
        """One read from the socket (the read lock held): pings and pongs are dealt with
        now, everything else is queued for :meth:`receive`."""
        if self._ended is not None:
            raise trio.BrokenResourceError(self._ended)
        self.liveness.reading()
        data: bytes | bytearray = b""
        try:
            data = await self._stream.receive_some(self._limits.receive_size)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._ended = "the WebSocket connection broke"
        finally:
            self.liveness.read(got_bytes=bool(data))
        if not data:
            self._ended = self._ended or "the peer closed the socket without a close frame"
            raise trio.BrokenResourceError(self._ended)
        try:
            events = self._events(data)
        except WsRemoteProtocolError as exc:
            self._ended = f"WebSocket protocol error: {exc}"
            await self._abandon(CLOSE_PROTOCOL_ERROR, "protocol error")
            raise trio.BrokenResourceError(self._ended) from None
        await self._take(events)

    def _events(self, data: bytes | bytearray) -> list[Event | str]:
        """What ``data`` completes, in order: text messages the frame reader took, and
        wsproto's events for the frames it was given."""
        events: list[Event | str] = []
        for item in self._reader.feed(data):
            if isinstance(item, str):
                events.append(item)
            else:
                try:
                    self._ws.receive_data(item)
                    events.extend(self._ws.events())
                finally:
                    self._open = self._ws.state is ConnectionState.OPEN
        return events

    async def _take(self, events: list[Event | str]) -> None:
        for event in events:
            if type(event) is str:  # a whole text message: asked first, without the ABC check
                self._queue(event)
            elif isinstance(event, Ping):
                await self._pong(event)
            elif not isinstance(event, Pong):  # a pong: any bytes were liveness already
                self._queue(event)

    def _queue(self, event: Event | str) -> None:
        if isinstance(event, str):
            self._buffered += len(event)
        elif isinstance(event, TextMessage | BytesMessage):
            self._buffered += len(event.data)
        self._pending.append(event)

    async def _pong(self, ping: Ping) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self._write(ping.response())  # if it failed, the next read finds out

    async def read_ahead(self) -> None:
        """Keep reading while nobody takes messages, up to ``read_ahead`` bytes of them,
        so that control frames behind them are seen; returns when reading ends."""
        while not self._closed and self._ended is None:
            if self._buffered >= self._limits.read_ahead:
                self._room = trio.Event()
                await self._room.wait()
                self._room = None
                continue
            try:
                async with self._read_lock:
                    await self._fill()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return

    def receive_text_nowait(self) -> str:
        """The next message if it is a whole text message already read, without I/O.

        Raises :class:`trio.WouldBlock` for anything else (nothing read yet, a fragment,
        a binary message, a close frame, a message over the size bound): those are
        :meth:`receive`'s, which may have to write or close.
        """
        pending = self._pending
        if self._closed or self._parts or not pending:
            raise trio.WouldBlock
        event = pending[0]
        if type(event) is str:
            text = event
        elif (
            type(event) is TextMessage
            and event.message_finished
            and len(event.data) <= self._limits.max_message
        ):
            text = event.data
        else:
            raise trio.WouldBlock
        pending.popleft()
        self._buffered -= len(text)
        if self._room is not None and self._buffered < self._limits.read_ahead:
            self._room.set()
        return text

    async def receive(self) -> str | bytes:
        while True:
            if self._closed:
                raise trio.ClosedResourceError("the WebSocket is closed")
            event = await self._next_event()
            if isinstance(event, str):
                if not self._parts:  # always: the frame reader stops at a fragment
                    return event
                event = TextMessage(data=event)
            if isinstance(event, TextMessage | BytesMessage):
                message = await self._add_part(event)
                if message is not None:
                    return message
            elif isinstance(event, CloseConnection):
                await self._answer_close(event)
                raise trio.EndOfChannel
            elif isinstance(event, Ping):  # read with the handshake, before anyone could
                await self._pong(event)
            # Anything else: nothing to do.

    async def _add_part(self, event: TextMessage | BytesMessage) -> str | bytes | None:
        self._size += len(event.data)
        if self._size > self._limits.max_message:
            await self.close(CLOSE_TOO_BIG, "message too big")
            raise MessageTooBig(f"a message grew past {self._limits.max_message} bytes")
        self._parts.append(bytes(event.data) if isinstance(event.data, bytearray) else event.data)
        if not event.message_finished:
            return None
        parts, self._parts, self._size = self._parts, [], 0
        if isinstance(event, TextMessage):
            return "".join(part for part in parts if isinstance(part, str))
        return b"".join(part for part in parts if isinstance(part, bytes))

    # ------------------------------------------------------------------ keep-alive
    async def run(self) -> None:
        """The connection's background work until it ends or this is cancelled: the
        read-ahead, and a ping every ``ping_interval`` (see :meth:`keepalive`)."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.read_ahead)
            await self.keepalive()
            nursery.cancel_scope.cancel()

    async def keepalive(self) -> None:
        """Ping every ``ping_interval``; drop the connection when nothing comes back
        within ``ping_timeout`` seconds of listening (:mod:`._liveness`).

        A pong is noticed by whoever reads (the session's reader, or the read-ahead of
        :meth:`run`), so one of them must be running too.
        """
        interval = self._limits.ping_interval
        if interval is None:
            return
        while not self._closed:
            await trio.sleep(interval)
            heard = self.liveness.expect()
            self._pings += 1
            try:
                await self._write(Ping(payload=self._pings.to_bytes(4, "big")))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            self.liveness.restart()
            if not await self.liveness.heard_within(heard, self._limits.ping_timeout):
                logger.info(
                    "nothing from the peer within %s s of listening: dropping the connection",
                    self._limits.ping_timeout,
                )
                await self._release()
                return

    # ------------------------------------------------------------------ closing
    async def _answer_close(self, event: CloseConnection) -> None:
        with trio.move_on_after(self._limits.close_timeout) as scope:
            scope.shield = True
            try:
                if self._ws.state is ConnectionState.REMOTE_CLOSING:
                    await self._write(event.response())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        await self._release()

    async def _abandon(self, code: int, reason: str) -> None:
        """Send a close frame without waiting for the peer's (it broke the protocol)."""
        with trio.move_on_after(self._limits.close_timeout) as scope:
            scope.shield = True
            try:
                if self._ws.state is ConnectionState.OPEN:
                    await self._write(CloseConnection(code=code, reason=reason))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        await self._release()

    async def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        if self._closed:
            return
        with trio.move_on_after(self._limits.close_timeout) as scope:
            scope.shield = True
            try:
                if self._ws.state is ConnectionState.OPEN:
                    await self._write(CloseConnection(code=code, reason=reason))
                    # Wait briefly for the peer's close frame, so it learns the code.
                    while self._state() is ConnectionState.LOCAL_CLOSING:
                        event = await self._next_event()
                        if isinstance(event, CloseConnection):
                            break
            except (trio.BrokenResourceError, trio.ClosedResourceError, MessageTooBig):
                pass
        await self._release()

    def _state(self) -> ConnectionState:
        # A method, so the type checker does not narrow the state across awaits.
        return self._ws.state

    async def _release(self) -> None:
        self._closed = True
        if self._room is not None:
            self._room.set()
        await trio.aclose_forcefully(self._stream)

"""Whole WebSocket messages over a Trio byte stream, with wsproto doing the protocol.

:class:`WsprotoMessages` is the one place that turns frames into messages: it joins
fragments (bounded by ``max_message``), answers pings, completes the closing handshake,
and serialises writes, coalescing the frames queued meanwhile into one socket write.
The client and the lean server both use it; an ASGI server has its own (see
:mod:`._asgi`). Both satisfy :class:`MessageIO`, which is all
:class:`~trimcp.transports.websocket.WebSocketChannel` needs.
"""

from __future__ import annotations

import logging
from collections import deque
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
from ._limits import WebSocketLimits

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
      limits: ``max_message``, ``receive_size`` and ``close_timeout`` apply.
      pending: events wsproto produced during the handshake and not yet handled.
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
        self._pending: deque[Event] = pending if pending is not None else deque()
        self._batcher = WriteBatcher(self._write_batch, self._check_broken)
        self._broken = False
        self._parts: list[str | bytes] = []
        self._size = 0
        self._closed = False
        self._pong: trio.Event | None = None
        self._pings = 0

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
        await self._batcher.submit(frame)

    def _check_broken(self) -> None:
        if self._broken:
            raise trio.BrokenResourceError("the WebSocket connection broke")

    async def _write_batch(self, batch: bytes) -> None:
        try:
            await self._stream.send_all(batch)
        except BaseException:
            self._broken = True
            await self._release()
            raise

    async def send_text(self, text: str) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket is closed")
        await self._write(TextMessage(data=text))

    async def _next_event(self) -> Event:
        while not self._pending:
            try:
                data = await self._stream.receive_some(self._limits.receive_size)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                raise trio.BrokenResourceError("the WebSocket connection broke") from None
            if not data:
                raise trio.BrokenResourceError("the peer closed the socket without a close frame")
            try:
                self._ws.receive_data(bytes(data))
                self._pending.extend(self._ws.events())
            except WsRemoteProtocolError as exc:
                await self.close(CLOSE_PROTOCOL_ERROR, "protocol error")
                raise trio.BrokenResourceError(f"WebSocket protocol error: {exc}") from None
        return self._pending.popleft()

    def receive_text_nowait(self) -> str:
        """The next message if it is a whole text message already read, without I/O.

        Raises :class:`trio.WouldBlock` for anything else (nothing read yet, a fragment,
        a binary message, a ping, a close frame, a message over the size bound): those
        are :meth:`receive`'s, which may have to write or close.
        """
        pending = self._pending
        if self._closed or self._parts or not pending:
            raise trio.WouldBlock
        event = pending[0]
        if (
            type(event) is not TextMessage
            or not event.message_finished
            or len(event.data) > self._limits.max_message
        ):
            raise trio.WouldBlock
        pending.popleft()
        return event.data

    async def receive(self) -> str | bytes:
        while True:
            if self._closed:
                raise trio.ClosedResourceError("the WebSocket is closed")
            event = await self._next_event()
            if isinstance(event, TextMessage | BytesMessage):
                message = await self._add_part(event)
                if message is not None:
                    return message
            elif isinstance(event, Ping):
                try:
                    await self._write(event.response())
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    raise trio.BrokenResourceError("the WebSocket connection broke") from None
            elif isinstance(event, CloseConnection):
                await self._answer_close(event)
                raise trio.EndOfChannel
            elif isinstance(event, Pong) and self._pong is not None:
                self._pong.set()
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

    async def keepalive(self) -> None:
        """Ping every ``ping_interval``; drop the connection when a pong is late.

        Runs until cancelled or the connection ends; a pong is noticed by whoever is in
        :meth:`receive` (the session's reader), so that must be running too.
        """
        interval = self._limits.ping_interval
        if interval is None:
            return
        while not self._closed:
            await trio.sleep(interval)
            self._pong = trio.Event()
            self._pings += 1
            try:
                await self._write(Ping(payload=self._pings.to_bytes(4, "big")))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            with trio.move_on_after(self._limits.ping_timeout):
                await self._pong.wait()
                continue
            logger.info("no pong within %s s: dropping the connection", self._limits.ping_timeout)
            await self._release()
            return

    async def _answer_close(self, event: CloseConnection) -> None:
        with trio.move_on_after(self._limits.close_timeout) as scope:
            scope.shield = True
            try:
                if self._ws.state is ConnectionState.REMOTE_CLOSING:
                    await self._write(event.response())
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
        await trio.aclose_forcefully(self._stream)

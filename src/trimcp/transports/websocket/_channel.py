"""A :class:`~trimcp.nursery.MessageChannel` over WebSocket messages.

Each WebSocket text message carries exactly one JSON-RPC message (or, in 2025-03-26,
one batch array), with no further framing. A text message that does not decode is
answered with the error the wire layer attached (``-32700``, ``-32600`` ...) and
reading goes on: a WebSocket keeps its message boundaries, so a bad message never
desynchronises the stream. A binary message is not MCP: the connection is closed with
1003. A message over the size bound is closed with 1009 (see :mod:`._frames`).

With authorization the connection belongs to the caller its handshake authenticated:
every request on it is that caller's, and :func:`serve_until_expiry` closes it (1008)
when the credentials expire, since a WebSocket cannot present new ones.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import final

import trio

from trimcp.protocol import Feature, supports
from trimcp.wire import ErrorResponse, Message, RemoteProtocolError, RequestId, decode, encode

from ..http._auth import AuthenticatedCaller
from ._frames import CLOSE_NORMAL, CLOSE_UNSUPPORTED, MessageIO, MessageTooBig

__all__ = ["CLOSE_POLICY", "WebSocketChannel", "serve_until_expiry"]

#: Close code for a policy violation (a refused handshake, expired credentials).
CLOSE_POLICY = 1008

logger = logging.getLogger("trimcp.websocket")


@final
class WebSocketChannel:
    """One MCP peer over a WebSocket; implements :class:`trimcp.nursery.MessageChannel`.

    Args:
      io: whole messages in both directions (wsproto over a socket, or an ASGI server).
      caller: who the handshake authenticated (``None``: no authorization).
    """

    def __init__(self, io: MessageIO, *, caller: AuthenticatedCaller | None = None) -> None:
        self._io = io
        self.caller = caller
        self._allow_batch = False
        self._batch: deque[Message] = deque()
        #: A message :meth:`receive_nowait` read that did not decode: answered by
        #: :meth:`receive`, in order.
        self._undecoded: RemoteProtocolError | None = None
        #: Messages that did not decode and were answered with an error.
        self.rejected = 0
        #: Withdraws a send still queued (see :class:`~trimcp.nursery.MessageChannel`),
        #: when the message I/O can.
        self.interrupt_send: Callable[[trio.lowlevel.Task, BaseException], bool] | None = getattr(
            io, "interrupt_send", None
        )
        #: Sends text already encoded as UTF-8, when the message I/O can (wsproto's
        #: takes a ``str`` and encodes it again).
        self._send_utf8: Callable[[bytes], Awaitable[None]] | None = getattr(io, "send_utf8", None)
        #: Queues encoded text for the connection's writer task, when the message I/O
        #: has one (see :meth:`start_writer`).
        self._put_utf8: Callable[[bytes], int] | None = getattr(io, "put_utf8", None)

    def send(self, message: Message, *, related: RequestId | None = None) -> Awaitable[None]:
        """Encode ``message`` now and hand back the awaitable that writes it: a plain
        function, so a sender waiting for its frame to be written holds no frame of this
        layer. A message that cannot be encoded raises here."""
        send_utf8 = self._send_utf8
        if send_utf8 is not None:
            return send_utf8(encode(message))
        return self._io.send_text(encode(message).decode("utf-8"))

    def send_nowait(self, message: Message) -> int:
        """Queue ``message`` for the connection's writer task and return the key that
        :meth:`withdraw` takes; :class:`trio.WouldBlock` when the message I/O has no
        writer task, or past its bound of unwritten bytes (then :meth:`send` it)."""
        put_utf8 = self._put_utf8
        if put_utf8 is None:
            raise trio.WouldBlock
        return put_utf8(encode(message))

    def withdraw(self, key: object) -> bool:
        """Take back a message :meth:`send_nowait` queued if it was not taken for
        writing yet (``True``: it will never be written)."""
        withdraw: Callable[[int], bool] | None = getattr(self._io, "withdraw", None)
        return key.__class__ is int and withdraw is not None and withdraw(key)

    def start_writer(self, spawn: Callable[[Callable[[], Awaitable[None]]], object]) -> bool:
        """Let a writer task of ``spawn``'s nursery (the session's) make the writes, when
        the message I/O can (wsproto's; an ASGI server writes for itself), so that
        :meth:`send_nowait` queues without waiting for its write."""
        start: Callable[[Callable[[Callable[[], Awaitable[None]]], object]], bool] | None
        start = getattr(self._io, "start_writer", None)
        return start is not None and start(spawn)

    def receive_nowait(self) -> Message:
        """A message already read, without a checkpoint (see
        :class:`~trimcp.nursery.MessageChannel`); :class:`trio.WouldBlock` otherwise.

        Only a whole text message that wsproto already parsed qualifies; one that does
        not decode is kept for :meth:`receive`, which answers it.
        """
        if self._batch:
            return self._batch.popleft()
        if self._undecoded is not None:
            raise trio.WouldBlock
        receive_text = getattr(self._io, "receive_text_nowait", None)
        if receive_text is None:
            raise trio.WouldBlock
        data: str = receive_text()
        try:
            decoded = decode(data, allow_batch=self._allow_batch)
        except RemoteProtocolError as exc:
            self._undecoded = exc
            raise trio.WouldBlock from None
        if isinstance(decoded, list):
            self._batch.extend(decoded[1:])
            return decoded[0]
        return decoded

    async def receive(self) -> Message:
        if self._batch:
            return self._batch.popleft()
        if self._undecoded is not None:
            exc, self._undecoded = self._undecoded, None
            await self._reject(exc)
        while True:
            try:
                data = await self._io.receive()
            except MessageTooBig as exc:
                raise trio.BrokenResourceError(str(exc)) from None
            if isinstance(data, bytes):
                await self._io.close(CLOSE_UNSUPPORTED, "MCP messages are text")
                raise trio.BrokenResourceError("the peer sent a binary message")
            try:
                decoded = decode(data, allow_batch=self._allow_batch)
            except RemoteProtocolError as exc:
                await self._reject(exc)
                continue
            if isinstance(decoded, list):
                self._batch.extend(decoded[1:])
                return decoded[0]
            return decoded

    async def _reject(self, exc: RemoteProtocolError) -> None:
        self.rejected += 1
        logger.info("rejected WebSocket message: %s", exc)
        hint: ErrorResponse | None = exc.error_hint
        if hint is not None:
            await self.send(hint)

    def caller_for(self, request_id: RequestId) -> AuthenticatedCaller | None:
        """Every request on the connection is its handshake's caller's."""
        return self.caller

    async def aclose(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        await self._io.close(code, reason)

    def negotiated(self, protocol_version: str) -> None:
        self._allow_batch = supports(protocol_version, Feature.JSONRPC_BATCH)


async def serve_until_expiry(
    serve_session: Callable[[WebSocketChannel], Awaitable[object]], channel: WebSocketChannel
) -> None:
    """Serve ``channel``'s session; with credentials that expire, only until they do,
    then close the connection with 1008 (the client reconnects with fresh ones)."""
    caller = channel.caller
    expires_at = caller.expires_at if caller is not None else None
    if expires_at is None:
        await serve_session(channel)
        return

    async def expire() -> None:
        await trio.sleep(max(0.0, expires_at - time.time()))
        logger.info("WebSocket credentials expired: connection closed")
        # Closing first makes the session end by itself, its reader seeing the close.
        await channel.aclose(CLOSE_POLICY, "the access token expired")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(expire)
        await serve_session(channel)
        nursery.cancel_scope.cancel()

"""One 2024-11-05 HTTP+SSE session as a :class:`~trimcp.nursery.MessageChannel`.

Inbound, POSTs to the messages endpoint queue decoded messages (:meth:`deliver`) into a
bounded queue, as on Streamable HTTP; the session reads them with :meth:`receive`.
Outbound, every message the session sends, whatever it relates to, is one
``event: message`` on the session's single SSE stream: there is no routing, so
``related`` is ignored. The stream's :class:`Outbox` holds the ``endpoint`` event first.

Sending never waits on the network. A stream that overflows its bounds (a client that
stopped reading), or outgrows the session's output budget, is aborted, and that ends
the session: this transport cannot resume a stream, and a session that lost a message
is broken.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import final

import trio

from trimcp.nursery import Caller
from trimcp.wire import Message, RequestId, encode, encode_sse

from ._budget import ByteBudget
from ._handshake import note_initialized
from ._server_limits import HttpServerLimits
from ._sse_stream import Outbox

__all__ = ["LegacySseChannel"]

logger = logging.getLogger("trimcp.http.server")


@final
class LegacySseChannel:
    """The channel of one HTTP+SSE session; see the module doc.

    Args:
      session_id: the ``session_id`` of the messages endpoint's query.
      limits: the inbound queue and stream bounds.
      endpoint: the URI sent as the ``endpoint`` event (the first of the stream).
      output: the session's output budget (``None``: only the stream's bounds).
    """

    def __init__(
        self,
        session_id: str,
        limits: HttpServerLimits,
        endpoint: str,
        output: ByteBudget | None = None,
    ) -> None:
        self.session_id: str | None = session_id
        #: The revision the session negotiated (set by the lifecycle).
        self.protocol_version: str | None = None
        self.on_close: Callable[[], None] | None = None
        #: Called once ``notifications/initialized`` was delivered (the handshake is done).
        self.on_initialized: Callable[[], None] | None = None
        self.output = output
        self._inbound_send, self._inbound = trio.open_memory_channel[Message](limits.inbound_queue)
        self.outbox = Outbox(
            max_events=limits.stream_queue_events,
            max_bytes=limits.stream_queue_bytes,
            budget=output,
        )
        self.outbox.put(encode_sse(data=endpoint, event="endpoint"))
        self._closed = False
        #: With authorization: the identity of the caller that opened the stream (the
        #: session is theirs alone), and the credentials it last presented.
        self.owner: str | None = None
        self._caller: Caller | None = None

    def bind(self, caller: Caller | None) -> None:
        """Record who is sending now (the stream's opener, then each POST's caller,
        which the endpoint has checked is the same identity)."""
        if caller is not None:
            self.owner = caller.identity
            self._caller = caller

    def caller_for(self, request_id: RequestId) -> Caller | None:
        """The session's caller as of its latest POST (every POST is the owner's)."""
        return self._caller

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------ MessageChannel
    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        """Queue ``message`` as an ``event: message``; never waits on the network, but is
        a checkpoint (a sender looping on it lets the stream's writer run).

        Raises :class:`trio.ClosedResourceError` once the session is closed, and
        :class:`trio.BrokenResourceError` when the stream overflowed (which closes it).
        """
        await trio.lowlevel.checkpoint()
        if self._closed:
            raise trio.ClosedResourceError("the SSE session is closed")
        event = encode_sse(data=encode(message).decode(), event="message")
        if not self.outbox.put(event):
            logger.info("SSE session %s: the stream overflowed; session ended", self.session_id)
            self.close()
            raise trio.BrokenResourceError("the SSE stream is closed")

    async def receive(self) -> Message:
        return await self._inbound.receive()

    async def aclose(self) -> None:
        self.close()

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version

    # ------------------------------------------------------------ the transport's side
    async def deliver(self, message: Message) -> None:
        """Queue one inbound message (waits while the queue is full).

        Raises :class:`trio.ClosedResourceError` once the session is closed.
        ``notifications/initialized`` calls :attr:`on_initialized`.
        """
        await self._inbound_send.send(message)
        note_initialized(self, message)

    def close(self) -> None:
        """End the session: no more input; the stream ends after what is queued."""
        if self._closed:
            return
        self._closed = True
        self._inbound_send.close()
        self.outbox.close()
        if self.on_close is not None:
            self.on_close()

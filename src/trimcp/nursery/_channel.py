"""What a session needs from a transport: a two-way channel of decoded messages.

Transports (memory, stdio, Streamable HTTP, WebSocket) implement this; the session never
sees bytes. Each implementation owns its framing and its bad-input replies: a line that
does not decode is answered by the transport itself with the protocol error the wire
layer attached, and never reaches the session.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

from trimcp.wire import Message, RequestId

__all__ = ["MessageChannel"]


class MessageChannel(Protocol):
    """A two-way, message-oriented channel to one peer.

    Contract:

    * ``send`` is atomic per message: concurrent senders never interleave bytes. It
      raises :class:`trio.BrokenResourceError` or :class:`trio.ClosedResourceError` when
      the peer is gone. It is a checkpoint, as every Trio async API, even when it takes
      the message at once: a handler sending notifications in a loop must let the
      task writing them, and every other task, run.
    * ``related`` names the inbound request a message belongs to (its response, progress
      and log notifications, reverse calls made while handling it), or ``None``. Stream
      transports ignore it; Streamable HTTP uses it to put the message on that request's
      SSE stream.
    * ``receive`` returns the next message, and raises :class:`trio.EndOfChannel` at a
      clean end of input, or :class:`trio.BrokenResourceError` /
      :class:`trio.ClosedResourceError` when the channel broke or was closed.
    * Optionally, ``receive_nowait()`` returns a message already received without a
      checkpoint, or raises :class:`trio.WouldBlock` (and the errors of ``receive``).
      The session then reads a burst in one scheduler step instead of one step per
      message; a channel without it works the same, one message per step.
    * Optionally, ``half_close = True`` says that after :class:`trio.EndOfChannel` the
      output may still work (a byte stream whose peer closed only its sending half, as
      stdio clients do to end a session). The session then answers the requests it
      already read, within ``eof_grace``, before it ends. Without it, the end of input
      ends the session at once.
    * Optionally, ``interrupt_send(task, error) -> bool`` withdraws the message ``task``
      is waiting to send, if it was not taken for writing yet, and makes that send raise
      ``error``; ``False`` when there is none (being written, or not waiting there). With
      it the session bounds its outbound calls by one deadline timer instead of a
      cancel scope per call (``nursery._deadlines``); ``None`` or absent: a scope each.
    * Optionally, ``send_nowait(message)`` sends a message at once without waiting or
      raises :class:`trio.WouldBlock` (and the errors of ``send``). With it, and no send
      middleware, a request or an answer takes no scheduler round of its own. A channel
      that only queues the message (a byte stream's writer task writes it later) returns
      a key, and ``withdraw(key) -> bool`` takes the message back if it was not written
      yet: a call that ends before then (timed out, cancelled) is then never seen by the
      peer, instead of being followed by its cancellation.
    * Optionally, ``start_writer(spawn) -> bool``: the session calls it once, with its
      nursery's ``start_soon``, before it sends anything, so that a byte stream's
      writes can be made by a task of the session (each sender then queues, and
      ``send_nowait`` queues without waiting) instead of by its senders.
    * ``negotiated`` tells the transport which protocol revision the session agreed on,
      for what depends on it (JSON-RPC batches in 2025-03-26, the
      ``MCP-Protocol-Version`` header on HTTP).
    """

    def send(self, message: Message, *, related: RequestId | None = None) -> Awaitable[None]:
        """An ``async def`` or a plain function returning the awaitable that sends."""
        ...

    async def receive(self) -> Message: ...

    async def aclose(self) -> None: ...

    def negotiated(self, protocol_version: str) -> None: ...

"""NDJSON over any Trio byte stream: the framing of stdio (and of raw test streams).

Reading goes through the sans-IO :class:`trimcp.wire.Connection`. A line that does not
decode is answered here with the error the wire layer attached (``-32700``,
``-32600`` ...) and reading goes on; a fatal framing error (a line over the limit) is
answered, then the channel breaks, because the stream cannot be resynchronised.

Writes are serialised so that lines never interleave, and coalesced: each write carries
every line queued by then in one ``send_all`` (:mod:`trimcp.transports._batch`), so a
burst of answers, or the ``notifications/cancelled`` of a thousand abandoned calls,
costs one write where it cost one each. A session starts the stream's writer task in
its nursery (:meth:`StreamChannel.start_writer`): it makes the writes, and the session's
requests and answers are queued without waiting for them (:meth:`StreamChannel.send_nowait`,
up to ``max_unwritten`` bytes), a scheduler round less per message. Without it (a
stream used by no session) the sender holding the write lock writes.

A batch carries other senders' lines, so its write is shielded from the cancellation
of the task that happens to hold the lock (a write cut short would leave half a line on
the stream, corrupting it for everyone) and bounded instead by ``send_timeout``: a peer
that reads nothing for that long (B40, a stalled consumer) breaks the channel. A sender
cancelled before its line was taken withdraws it. A write that fails, or finds the peer
gone, breaks the channel for every sender and closes the input as well, so the session
ends rather than reading on for a peer it can no longer answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import final

import trio

from trimcp.protocol import Feature, supports
from trimcp.wire import (
    CLOSED,
    DEFAULT_MAX_LINE,
    NEED_DATA,
    Connection,
    ErrorResponse,
    Message,
    RemoteProtocolError,
    RequestId,
    encode,
)

from ._batch import DEFAULT_MAX_UNWRITTEN, WriteBatcher

__all__ = ["DEFAULT_RECEIVE_SIZE", "DEFAULT_SEND_TIMEOUT", "StreamChannel"]

logger = logging.getLogger("trimcp.transports")

#: Bytes asked for per read.
DEFAULT_RECEIVE_SIZE = 64 * 1024
#: Seconds one write may take before the peer is deemed stalled and the channel breaks.
DEFAULT_SEND_TIMEOUT = 30.0


@final
class StreamChannel:
    """A :class:`trimcp.nursery.MessageChannel` over a send stream and a receive stream.

    The input may end while the output still works (a stdio client closed the server's
    stdin but still reads its stdout): the channel says so with ``half_close``, and the
    session answers what it already read before it ends.

    Args:
      send_stream: where messages are written (the same object as ``receive_stream``
        for a two-way stream).
      receive_stream: where messages are read.
      max_line: the largest line accepted (default 4 MiB); see :class:`trimcp.wire.LineFramer`.
      receive_size: bytes asked for per read (default 64 KiB).
      send_timeout: seconds one write may take (default 30); see the module doc.
      max_unwritten: bytes of messages the session may queue for the stream's writer
        task without waiting for their write (default 64 KiB); past it, senders wait.
    """

    #: A clean end of input leaves the output open (see the class doc).
    half_close = True

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
        send_timeout: float = DEFAULT_SEND_TIMEOUT,
        max_unwritten: int = DEFAULT_MAX_UNWRITTEN,
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self._connection = Connection(max_line=max_line)
        self._receive_size = receive_size
        self._send_timeout = send_timeout
        self._batcher = WriteBatcher(self._write, self._check_output, max_unwritten=max_unwritten)
        #: Why the output can no longer be written (a batch failed), or None.
        self._output_failure: str | None = None
        self._broken = False
        #: Lines that did not decode and were answered with an error.
        self.rejected = 0

    def send(self, message: Message, *, related: RequestId | None = None) -> Awaitable[None]:
        """Encode ``message`` now and hand back the awaitable that writes it (see
        ``WriteBatcher.submit``): a plain function, so a
        sender waiting for its batch holds no frame of this layer. An output that
        already failed, or a message that cannot be encoded, raises here."""
        if self._output_failure is not None:  # (_check_output inline: every send)
            raise trio.BrokenResourceError(self._output_failure)
        # (Connection.send inline: the message's line.)
        return self._batcher.submit(encode(message) + b"\n")

    def send_nowait(self, message: Message) -> int:
        """Queue ``message``'s line for the writer task and return the key that
        :meth:`withdraw` takes (see ``WriteBatcher.put``); :class:`trio.WouldBlock`
        without a writer task or past the bound of unwritten bytes (then :meth:`send`
        it)."""
        if self._output_failure is not None:
            raise trio.BrokenResourceError(self._output_failure)
        batcher = self._batcher
        if not batcher.writer:  # (``put`` checks again; this saves encoding a refused line)
            raise trio.WouldBlock
        return batcher.put(encode(message) + b"\n")

    def withdraw(self, key: object) -> bool:
        """Take back a line :meth:`send_nowait` queued if it was not taken for writing
        yet (``True``: it will never be written)."""
        return key.__class__ is int and self._batcher.withdraw(key)

    def start_writer(self, spawn: Callable[[Callable[[], Awaitable[None]]], object]) -> bool:
        """Let a writer task of ``spawn``'s nursery (the session's) write the lines
        from now on, so that :meth:`send_nowait` can queue without waiting."""
        return self._batcher.start_writer(spawn)

    def interrupt_send(self, task: trio.lowlevel.Task, error: BaseException) -> bool:
        """Withdraw ``task``'s line if it still waits to be written, and make its send
        raise ``error`` (see :class:`~trimcp.nursery.MessageChannel`)."""
        return self._batcher.interrupt(task, error)

    def _check_output(self) -> None:
        if self._output_failure is not None:
            raise trio.BrokenResourceError(self._output_failure)

    async def _write(self, batch: bytes) -> None:
        """Write ``batch`` whole, shielded and bounded by ``send_timeout``."""
        try:
            with trio.CancelScope(
                shield=True, deadline=trio.current_time() + self._send_timeout
            ) as scope:
                await self._send_stream.send_all(batch)
        except trio.ClosedResourceError:
            self._output_failure = "the output stream was closed"
            raise
        except trio.BrokenResourceError as exc:
            # Output that cannot be written (the peer closed its read end, EPIPE) means
            # a dead peer.
            self._output_failure = str(exc) or "the peer closed its input"
            await self._end_input()
            raise
        if scope.cancelled_caught:
            failure = f"a write took over {self._send_timeout:g} s: the peer stopped reading"
            self._output_failure = failure
            await self._end_input()
            raise trio.BrokenResourceError(failure)

    async def _end_input(self) -> None:
        """End the input too, so the reader sees the end now instead of waiting for a
        peer that can no longer be answered."""
        self._broken = True
        with trio.CancelScope(shield=True):
            await self._receive_stream.aclose()

    async def receive(self) -> Message:
        connection = self._connection
        while True:
            if self._broken:
                raise trio.BrokenResourceError(
                    self._output_failure or "the input stream could not be resynchronised"
                )
            try:
                event = connection.next_event()
            except RemoteProtocolError as exc:
                await self._reject(exc)
                continue
            if event is NEED_DATA:
                try:
                    data = await self._receive_stream.receive_some(self._receive_size)
                except trio.ClosedResourceError:
                    if self._output_failure is None:
                        raise
                    # Closed by a failed write: the reader needs that write's reason.
                    raise trio.BrokenResourceError(self._output_failure) from None
                connection.receive_data(bytes(data))
            elif event is CLOSED:
                raise trio.EndOfChannel
            else:
                return event

    async def _reject(self, exc: RemoteProtocolError) -> None:
        self.rejected += 1
        logger.info("rejected input: %s", exc)
        if exc.fatal:
            self._broken = True
        hint: ErrorResponse | None = exc.error_hint
        if hint is not None:
            try:
                await self.send(hint)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._broken = True

    async def aclose(self) -> None:
        await self._send_stream.aclose()
        await self._receive_stream.aclose()

    def negotiated(self, protocol_version: str) -> None:
        self._connection.allow_batch = supports(protocol_version, Feature.JSONRPC_BATCH)

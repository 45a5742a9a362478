"""NDJSON over any Trio byte stream: the framing of stdio (and of raw test streams).

Reading goes through the sans-IO :class:`trimcp.wire.Connection`. A line that does not
decode is answered here with the error the wire layer attached (``-32700``,
``-32600`` ...) and reading goes on; a fatal framing error (a line over the limit) is
answered, then the channel breaks, because the stream cannot be resynchronised. Writes
are serialised by a FIFO lock so that messages never interleave. A write that finds the
peer gone (``BrokenResourceError``) closes the input as well, so the session ends rather
than reading on for a peer it can no longer answer.
"""

from __future__ import annotations

import logging
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
)

__all__ = ["DEFAULT_RECEIVE_SIZE", "StreamChannel"]

logger = logging.getLogger("trimcp.transports")

#: Bytes asked for per read.
DEFAULT_RECEIVE_SIZE = 64 * 1024


@final
class StreamChannel:
    """A :class:`trimcp.nursery.MessageChannel` over a send stream and a receive stream.

    Args:
      send_stream / receive_stream: the two halves (the same object for a two-way stream).
      max_line: the largest line accepted (default 4 MiB); see :class:`trimcp.wire.LineFramer`.
      owns_streams: close the streams in :meth:`aclose`.
    """

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self._connection = Connection(max_line=max_line)
        self._receive_size = receive_size
        self._lock = trio.StrictFIFOLock()
        self._broken = False
        #: Lines that did not decode and were answered with an error.
        self.rejected = 0

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        async with self._lock:
            # Encoded once the lock is held: a burst of senders queued on the lock
            # then holds messages, not their encodings as well.
            data = self._connection.send(message)
            try:
                await self._send_stream.send_all(data)
            except trio.BrokenResourceError:
                # Output that cannot be written (the peer closed its read end, EPIPE)
                # means a dead peer: end the input too, so the reader sees the end now
                # instead of waiting for input from a peer that can no longer be answered.
                self._broken = True
                await self._receive_stream.aclose()
                raise

    async def receive(self) -> Message:
        connection = self._connection
        while True:
            if self._broken:
                raise trio.BrokenResourceError("the input stream could not be resynchronised")
            try:
                event = connection.next_event()
            except RemoteProtocolError as exc:
                await self._reject(exc)
                continue
            if event is NEED_DATA:
                data = await self._receive_stream.receive_some(self._receive_size)
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

"""An NDJSON JSON-RPC connection with h11's three verbs, sans-IO.

:class:`Connection` glues :class:`LineFramer` to the codec: ``receive_data(bytes)`` (``b""`` = EOF),
``next_event()`` returning a message, :data:`NEED_DATA` or :data:`CLOSED`, and ``send(message)``
returning the bytes to write. It does no I/O and keeps no protocol state beyond framing, so it runs
equally under a Trio transport, a test or a fuzzer.

Error contract: ``next_event`` raises only :class:`RemoteProtocolError`. A bad line costs only that
line: the next call carries on with the following line. A *fatal* error (an oversized line) kills
the connection: every later ``next_event`` raises the same error again, and the transport must
send its ``error_hint`` and close.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import final

from ._codec import decode
from ._encode import encode
from ._errors import RemoteProtocolError
from ._events import Message
from ._framing import DEFAULT_MAX_LINE, LineFramer
from ._json import DEFAULT_MAX_DEPTH

__all__ = ["CLOSED", "NEED_DATA", "Connection"]


class _SentinelMeta(type):
    def __repr__(cls) -> str:
        return cls.__name__


@final
class NEED_DATA(metaclass=_SentinelMeta):
    """Returned by :meth:`Connection.next_event` when a complete line has not arrived yet.

    Compare with ``is``; the class itself is the value and cannot be instantiated.
    """

    def __new__(cls) -> NEED_DATA:
        raise TypeError("NEED_DATA is a sentinel; use the class itself")


@final
class CLOSED(metaclass=_SentinelMeta):
    """Returned by :meth:`Connection.next_event` after EOF, once every message has been taken."""

    def __new__(cls) -> CLOSED:
        raise TypeError("CLOSED is a sentinel; use the class itself")


class Connection:
    """One direction-agnostic NDJSON JSON-RPC byte stream.

    Args:
      max_line: the longest line accepted (see :class:`LineFramer`).
      allow_batch: decode JSON arrays as batches; the session sets :attr:`allow_batch` once
        2025-03-26 has been negotiated.
      max_depth: the deepest nesting accepted in one message.
    """

    allow_batch: bool
    """Whether a line holding a JSON array is decoded as a batch (settable at any time)."""

    def __init__(
        self,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        allow_batch: bool = False,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self.allow_batch = allow_batch
        self._max_depth = max_depth
        self._framer = LineFramer(max_line=max_line)
        # Messages of a decoded batch not yet handed out, in order.
        self._batch: deque[Message] = deque()
        self._fatal: RemoteProtocolError | None = None

    def receive_data(self, data: bytes) -> None:
        """Add bytes read from the peer; ``b""`` means the peer closed its side.

        Never raises for bad input (that surfaces from :meth:`next_event`).

        Raises:
          LocalProtocolError: data after EOF.
        """
        self._framer.feed(data)

    def next_event(self) -> Message | type[NEED_DATA] | type[CLOSED]:
        """The next message, :data:`NEED_DATA`, or :data:`CLOSED` (after EOF, once drained).

        A batch line yields its messages one call at a time.

        Raises:
          RemoteProtocolError: the next line is invalid (non-fatal: call again for the line after
            it) or the stream overflowed (fatal: raised again on every later call).
        """
        if self._fatal is not None:
            raise self._fatal.with_traceback(None)
        if self._batch:
            return self._batch.popleft()
        try:
            line = self._framer.next_line()
        except RemoteProtocolError as exc:
            if exc.fatal:
                self._fatal = exc
            raise
        if line is None:
            return CLOSED if self._framer.eof else NEED_DATA
        result = decode(line, allow_batch=self.allow_batch, max_depth=self._max_depth)
        if isinstance(result, list):
            self._batch.extend(result)
            return self._batch.popleft()
        return result

    def send(self, message: Message | Sequence[Message]) -> bytes:
        """The bytes to write for ``message`` (or a batch): one encoded line ending in ``b"\\n"``.

        Raises:
          LocalProtocolError: ``message`` cannot be encoded.
        """
        return encode(message) + b"\n"

"""Newline-delimited JSON framing (the stdio transport), sans-IO.

Contract:

- :meth:`LineFramer.feed` takes whatever bytes arrived (``b""`` means EOF); :meth:`next_line` hands
  out one complete line at a time, without its ``b"\\n"`` and without one trailing ``b"\\r"``.
  Blank lines (empty or only spaces, tabs and CR) are skipped. A final line with no newline is still
  delivered once EOF has been fed.
- A line longer than ``max_line`` bytes (not counting the ``b"\\n"``) is fatal: the stream cannot be
  resynchronised, because the rest of that line would be taken for the next message.
  :meth:`next_line` first returns every complete line that came before it, then raises
  :class:`RemoteProtocolError` with ``fatal=True`` and a -32600 "message too large" hint, on that
  call and every later one.
- Memory is bounded: the partial line is dropped as soon as it would pass ``max_line``, so the
  framer never holds more than ``max_line`` plus one fed chunk, and data fed after the overflow is
  discarded unread.
- Each byte is searched for a newline once: :meth:`feed` only looks at the new chunk, and a chunk
  containing newlines is cut into lines by one C-level ``bytes.split``. A long line arriving in
  many small chunks therefore costs O(n), not O(n**2).
"""

from __future__ import annotations

from collections import deque
from typing import Final

from ._codes import INVALID_REQUEST
from ._errors import LocalProtocolError, RemoteProtocolError
from ._events import ErrorObject, ErrorResponse

__all__ = ["DEFAULT_MAX_LINE", "LineFramer"]

DEFAULT_MAX_LINE: Final = 4 * 1024 * 1024
"""Default longest accepted line: 4 MiB, as python-sdk and go-sdk cap one message."""

_BLANK: Final = b" \t\r"


def _too_large() -> RemoteProtocolError:
    message = "Invalid Request: message too large"
    hint = ErrorResponse(id=None, error=ErrorObject(code=INVALID_REQUEST, message=message))
    return RemoteProtocolError(message, error_hint=hint, fatal=True)


class LineFramer:
    """Split a byte stream into lines, with a hard bound on line length and memory.

    Args:
      max_line: the longest line accepted, in bytes, not counting the terminating ``b"\\n"``.
    """

    def __init__(self, *, max_line: int = DEFAULT_MAX_LINE) -> None:
        if max_line < 1:
            raise LocalProtocolError("max_line must be at least 1")
        self._max_line = max_line
        # Complete lines not yet taken, still with any trailing b"\r" (stripped when taken).
        self._lines: deque[bytes] = deque()
        # The bytes after the last newline seen; never longer than max_line.
        self._partial = bytearray()
        # Set once the partial line overflowed: raised after the lines that came before it.
        self._overflow = False
        # The fatal error, once raised; every later next_line raises it again.
        self._error: RemoteProtocolError | None = None
        self._eof_fed = False

    def feed(self, data: bytes) -> None:
        """Add bytes from the peer; ``b""`` marks the end of the stream.

        Raises:
          LocalProtocolError: data fed after EOF.
        """
        if not data:
            if not self._eof_fed:
                self._eof_fed = True
                if self._partial and not self._overflow:
                    self._lines.append(bytes(self._partial))
                self._partial = bytearray()
            return
        if self._eof_fed:
            raise LocalProtocolError("data fed after EOF")
        if self._overflow or self._error is not None:
            return  # the stream is dead: drop the data instead of buffering it
        if data.find(b"\n") < 0:
            if len(self._partial) + len(data) > self._max_line:
                self._overflow_now()
            else:
                self._partial += data
            return
        lines = data.split(b"\n")
        if self._partial:
            self._partial += lines[0]
            lines[0] = bytes(self._partial)
        tail = lines.pop()
        self._lines.extend(lines)
        if len(tail) > self._max_line:
            self._overflow_now()
        else:
            self._partial = bytearray(tail)

    def _overflow_now(self) -> None:
        self._overflow = True
        self._partial = bytearray()

    def next_line(self) -> bytes | None:
        """Take the next complete, non-blank line, or ``None`` if more data is needed.

        Raises:
          RemoteProtocolError: fatal "message too large" (see the module docstring).
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        lines = self._lines
        while lines:
            line = lines.popleft()
            if len(line) > self._max_line:
                self._fail()
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line or (line[0] in _BLANK and not line.strip(_BLANK)):
                continue
            return line
        if self._overflow:
            self._fail()
        return None

    def _fail(self) -> None:
        self._lines.clear()
        self._partial = bytearray()
        self._error = _too_large()
        raise self._error

    @property
    def eof(self) -> bool:
        """``True`` once EOF was fed and every line has been taken (and no error is pending)."""
        return self._eof_fed and not self._lines and not self._overflow and self._error is None

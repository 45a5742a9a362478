"""Server-Sent Events, sans-IO: encoding and incremental decoding, by the WHATWG HTML rules.

Encoding (:func:`encode_sse`) writes, in this order, ``event:``, ``id:``, ``retry:`` and one
``data:`` line per line of ``data`` (CRLF, CR and LF all split lines), each as ``name: value``,
then the blank line that ends the event. With ``data=None`` and an id or retry it writes the MCP
*priming event*: exactly ``b"id: x\\ndata: \\n\\n"`` for ``id="x"`` (plus ``retry: n`` when given).
Ids and event names containing CR, LF or NUL are refused with :class:`LocalProtocolError`: they
would end the field early, or (NUL in an id) be ignored by the receiver.

Decoding (:class:`SSEDecoder`) follows the WHATWG parsing rules: CR, LF and CRLF line ends (also
when a CRLF is split across chunks), one leading UTF-8 BOM per stream, ``:`` comment lines, a field
with no colon (empty value), one optional space after the colon, unknown fields ignored, ``id``
values containing NUL ignored, ``retry`` accepted only when all ASCII digits. Where it deliberately
differs, and why:

- an event whose data is empty (no ``data`` field, or one empty ``data:`` line, like the priming
  event) is not dispatched; its id and retry still take effect. MCP data is always JSON, so an
  empty data can only be a priming event, and handing it out would make every consumer filter it.
- :attr:`SSEDecoder.last_event_id` is updated when an event *ends* (its blank line), not when its
  ``id`` line is read. That is the value WHATWG sends in ``Last-Event-ID``: a stream cut between an
  ``id`` line and the blank line must not skip the event on resumption. It persists across events
  and streams; an empty ``id`` field resets it to ``""``.
- field lines must be strict UTF-8 (WHATWG substitutes U+FFFD): a silently altered JSON message is
  worse than a closed stream. Invalid UTF-8 is fatal.
- an event (all its non-comment lines, plus any line in progress) longer than ``max_event_size``
  bytes is fatal, so memory stays bounded; a retry value of more than 15 digits is ignored.

Fatal errors never lose events: if a :meth:`SSEDecoder.feed` call finds complete events before the
offending line, it returns them and the *next* call raises. Once failed, every call raises again.
``feed(b"")`` ends the stream: a partial event is discarded (WHATWG) and the next byte fed starts a
new stream (a reconnection), keeping :attr:`~SSEDecoder.last_event_id` and
:attr:`~SSEDecoder.retry`.
"""

from __future__ import annotations

from typing import Any, Final, final

import attrs

from ._errors import LocalProtocolError, RemoteProtocolError
from ._framing import DEFAULT_MAX_LINE

__all__ = ["SSEDecoder", "SSEEvent", "encode_comment", "encode_sse"]

_BOM: Final = b"\xef\xbb\xbf"
_MAX_RETRY_DIGITS: Final = 15


def _check_type(expected: type, optional: bool) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if (value is None and optional) or (
            isinstance(value, expected) and not isinstance(value, bool)
        ):
            return
        raise LocalProtocolError(
            f"SSEEvent.{attribute.name} must be {expected.__name__}, not {type(value).__name__}"
        )

    return check


@final
@attrs.frozen(kw_only=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``id`` and ``retry`` are the fields given in *this* event (``None`` when absent); the running
    values live on :class:`SSEDecoder`. Invalid construction raises :class:`LocalProtocolError`.
    """

    data: str = attrs.field(validator=_check_type(str, optional=False))
    event: str = attrs.field(default="message", validator=_check_type(str, optional=False))
    id: str | None = attrs.field(default=None, validator=_check_type(str, optional=True))
    retry: int | None = attrs.field(default=None, validator=_check_type(int, optional=True))


def _check_field(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise LocalProtocolError(f"SSE {name} must be a string, not {type(value).__name__}")
    if "\r" in value or "\n" in value or "\0" in value:
        raise LocalProtocolError(f"SSE {name} must not contain CR, LF or NUL")
    return value


def encode_sse(
    *, data: str | None, event: str | None = None, id: str | None = None, retry: int | None = None
) -> bytes:
    """Encode one event (see the module docstring for the exact bytes).

    Raises:
      LocalProtocolError: an id or event name with CR, LF or NUL; a negative or non-int retry; data
        that is not a string or not UTF-8 encodable; nothing to send at all.
    """
    out = ""
    if event is not None:
        out += "event: " + _check_field("event", event) + "\n"
    if id is not None:
        out += "id: " + _check_field("id", id) + "\n"
    if retry is not None:
        if not isinstance(retry, int) or isinstance(retry, bool) or retry < 0:
            raise LocalProtocolError("SSE retry must be a non-negative integer")
        out += f"retry: {retry}\n"
    if data is None:
        if id is None and retry is None:
            raise LocalProtocolError("an SSE event needs data, an id or a retry")
        out += "data: \n"
    elif not isinstance(data, str):
        raise LocalProtocolError(f"SSE data must be a string, not {type(data).__name__}")
    elif "\n" not in data and "\r" not in data:
        out += "data: " + data + "\n"  # the common case: one JSON message
    else:
        for line in data.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            out += "data: " + line + "\n"
    return _utf8(out + "\n")


def encode_comment(text: str = "") -> bytes:
    """A comment event: ``b":\\n\\n"``, or ``b": text\\n\\n"`` (one ``:`` line per line of text).

    Used as a keep-alive. The closing blank line lets intermediaries that buffer whole events pass
    it on; receivers dispatch nothing for it.
    """
    if not text:
        return b":\n\n"
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return _utf8("".join(": " + line + "\n" if line else ":\n" for line in lines) + "\n")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise LocalProtocolError("SSE text is not encodable as UTF-8 (lone surrogate)") from None


class SSEDecoder:
    """Incremental SSE parser: feed bytes, get the events they complete.

    Args:
      max_event_size: the largest event accepted, in bytes (see the module docstring).
    """

    # Slots: a client keeps a decoder per SSE stream it reads (every parked call over
    # SSE), and an instance dict would be most of its size.
    __slots__ = (
        "_at_start",
        "_data",
        "_error",
        "_event",
        "_event_id",
        "_event_retry",
        "_max",
        "_partial",
        "_size",
        "_skip_lf",
        "last_event_id",
        "retry",
    )

    last_event_id: str
    """The id of the last completed event that had one (``""`` initially or after an empty id)."""
    retry: int | None
    """The last valid ``retry`` value seen, in milliseconds, or ``None``."""

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_LINE) -> None:
        self._max = max_event_size
        self.last_event_id = ""
        self.retry = None
        self._error: RemoteProtocolError | None = None
        self._new_stream()

    def _new_stream(self) -> None:
        self._partial = bytearray()  # the line in progress, without terminator
        self._at_start = True  # a BOM may still be stripped
        self._skip_lf = False  # the last chunk ended in CR: a leading LF completes that CRLF
        self._discard_event()

    def _discard_event(self) -> None:
        self._data: list[str] = []
        self._event = ""
        # This event's id field: WHATWG's "last event ID buffer", applied only when the event ends.
        self._event_id: str | None = None
        self._event_retry: int | None = None
        self._size = 0  # bytes of this event's non-comment lines so far

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Add bytes; return the events they complete, in order. ``b""`` ends the stream.

        Raises:
          RemoteProtocolError: fatal, with ``error_hint=None``: an oversized event or invalid UTF-8
            (possibly detected by the previous call, which returned its events first).
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        if not data:
            self._new_stream()
            return []
        events: list[SSEEvent] = []
        try:
            self._feed(data, events)
        except RemoteProtocolError as exc:
            self._error = exc
            self._partial = bytearray()
            self._discard_event()
            if not events:
                raise
        return events

    def _feed(self, data: bytes, events: list[SSEEvent]) -> None:
        if self._at_start:
            data = self._strip_bom(data)
        if self._skip_lf and data:
            self._skip_lf = False
            if data[0] == 0x0A:
                data = data[1:]
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if last < 0:
            self._check_size(len(self._partial) + len(data))
            self._partial += data
            return
        block = data[: last + 1]
        if self._partial:
            block = bytes(self._partial) + block
            self._partial = bytearray()
        # Only a CR that ends the chunk may be half of a CRLF split across chunks.
        self._skip_lf = last == len(data) - 1 and data[last] == 0x0D
        lines = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        lines.pop()  # the empty piece after the final terminator
        for line in lines:
            self._line(line, events)
        tail = data[last + 1 :]
        self._check_size(len(tail))
        self._partial = bytearray(tail)

    def _strip_bom(self, data: bytes) -> bytes:
        """Drop one leading BOM; until 3 bytes have arrived a BOM prefix waits in the partial."""
        data = bytes(self._partial) + data
        if len(data) < len(_BOM) and _BOM.startswith(data):
            self._partial = bytearray(data)
            return b""
        self._partial = bytearray()
        self._at_start = False
        return data[len(_BOM) :] if data.startswith(_BOM) else data

    def _check_size(self, pending: int) -> None:
        if self._size + pending > self._max:
            raise RemoteProtocolError("SSE event too large", error_hint=None, fatal=True)

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        self._check_size(len(raw))
        if raw[0] == 0x3A:  # ":" comment
            return
        self._size += len(raw)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RemoteProtocolError(
                "SSE stream is not valid UTF-8", error_hint=None, fatal=True
            ) from None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self._event_id = value
        elif (
            field == "retry"
            and value.isascii()
            and value.isdigit()
            and len(value) <= _MAX_RETRY_DIGITS
        ):
            self.retry = self._event_retry = int(value)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._event_id is not None:
            self.last_event_id = self._event_id
        data = "\n".join(self._data)
        if data:
            events.append(
                SSEEvent(
                    data=data,
                    event=self._event or "message",
                    id=self._event_id,
                    retry=self._event_retry,
                )
            )
        self._discard_event()

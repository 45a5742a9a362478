"""The one frame an MCP message needs, written and read without wsproto's per-frame work.

Every message this transport sends is one whole text message in one final frame, and
neither trimcp end offers an extension, so the frame is a fixed first byte, the
length, and (from a client) a masking key and the masked payload. wsproto builds the
same bytes through an event object, a copy of the payload into a ``bytearray``, the
extension loop and four ``translate`` calls for the mask: about a sixth of a busy
client's CPU. Here the mask is one XOR of two integers, and the payload is the UTF-8
the wire encoder already produced (wsproto takes a ``str``, so it was decoded only to
be encoded again). A property test checks the bytes against wsproto's for the same key.

Reading, :class:`FrameReader` takes the same frames (whole, final, unextended text
frames, masked as the side requires, within ``max_message``) out of the bytes read and
decodes them itself, and hands every other frame to wsproto whole, so wsproto always
stands at a frame boundary and sees every ping and pong in order. At the first frame
of any other kind (a fragment, a binary message, a close, a frame too large, a
reserved bit, text that is not UTF-8 ...) it gives wsproto that frame and everything
after it, for the rest of the connection: every check and error (1002, 1007, 1009) is
then wsproto's, exactly as before.

Masking keys come from :func:`os.urandom`, as wsproto's do, drawn
:data:`KEYS_PER_DRAW` at a time rather than one system call per frame: RFC 6455
section 5.3 asks for keys from a strong source of entropy that a peer cannot predict
from earlier frames, which a block of ``urandom`` bytes used once each still is.
"""

from __future__ import annotations

import os
import struct
from typing import Final, final

__all__ = ["KEYS_PER_DRAW", "FrameReader", "MaskingKeys", "at_frame_boundary", "text_frame"]

#: Masking keys drawn from the system per :func:`os.urandom` call (4 bytes each).
KEYS_PER_DRAW: Final = 64

_FIN_TEXT: Final = 0x81  # FIN, no RSV bit, opcode 1 (text)
_MASKED: Final = 0x80
_LENGTH_16: Final = 126
_LENGTH_64: Final = 127
_PING: Final = 0x89  # FIN, opcode 9
_PONG: Final = 0x8A  # FIN, opcode 10
_MAX_CONTROL: Final = 125


@final
class MaskingKeys:
    """A client connection's source of masking keys (each used for one frame)."""

    __slots__ = ("_at", "_block")

    def __init__(self) -> None:
        self._block = b""
        self._at = 0

    def next(self) -> bytes:
        at = self._at
        if at >= len(self._block):
            self._block = os.urandom(4 * KEYS_PER_DRAW)
            at = 0
        self._at = at + 4
        return self._block[at : at + 4]


def text_frame(payload: bytes, key: bytes | None) -> bytes:
    """A final text frame carrying ``payload`` (valid UTF-8), masked with ``key`` when
    given (a client's frames are masked, a server's are not)."""
    n = len(payload)
    mask_bit = _MASKED if key is not None else 0
    if n < _LENGTH_16:
        header = bytes((_FIN_TEXT, mask_bit | n))
    elif n <= 0xFFFF:
        header = struct.pack("!BBH", _FIN_TEXT, mask_bit | _LENGTH_16, n)
    else:
        header = struct.pack("!BBQ", _FIN_TEXT, mask_bit | _LENGTH_64, n)
    if key is None:
        return header + payload
    return header + key + _masked(payload, key)


def _masked(payload: bytes | bytearray, key: bytes | bytearray) -> bytes:
    """``payload`` XOR the key repeated (masking and unmasking are the same)."""
    n = len(payload)
    mask = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(mask, "little")).to_bytes(
        n, "little"
    )


def at_frame_boundary(ws: object) -> bool:
    """Whether wsproto (a ``WSConnection`` past its handshake, or its frame layer)
    holds no part of a frame or message; ``False`` when that cannot be told (another
    wsproto layout), so that :class:`FrameReader` then leaves everything to wsproto."""
    layer = getattr(ws, "connection", ws)
    proto = getattr(layer, "_proto", None)
    frames = getattr(proto, "_frame_decoder", None)
    buffer = getattr(frames, "buffer", None)
    message = getattr(proto, "_message_decoder", None)
    return (
        buffer is not None
        and len(buffer) == 0
        and getattr(frames, "header", False) is None
        and getattr(message, "opcode", False) is None
    )


@final
class FrameReader:
    """Whole text messages out of the bytes read, and the rest for wsproto (see the
    module doc).

    Args:
      masked: whether the peer's frames are masked (it is a client).
      max_payload: the largest text frame taken here; a larger one is wsproto's.
      active: ``False``: wsproto reads everything from the start.
    """

    __slots__ = ("_buffer", "_masked", "_max", "active")

    def __init__(self, *, masked: bool, max_payload: int, active: bool = True) -> None:
        self._buffer = bytearray()
        self._masked = _MASKED if masked else 0
        self._max = max_payload
        self.active = active

    def feed(self, data: bytes | bytearray) -> list[str | bytes]:
        """In order: each whole text message (``str``) and the bytes to give wsproto.

        An unfinished frame stays buffered here until the rest arrives (at most
        ``max_payload`` and a header).
        """
        if not self.active:
            return [bytes(data)]
        buffer = self._buffer
        buffer += data
        size = len(buffer)
        out: list[str | bytes] = []
        at = 0
        while size - at >= 2:
            first = buffer[at]
            second = buffer[at + 1]
            n = second & 0x7F
            head = at + 2
            if n == _LENGTH_16:
                head += 2
                if size < head:
                    break
                n = int.from_bytes(buffer[at + 2 : head], "big")
            elif n == _LENGTH_64:
                head += 8
                if size < head:
                    break
                n = int.from_bytes(buffer[at + 2 : head], "big")
            mask = second & _MASKED
            start = head + 4 if mask else head
            end = start + n
            if first == _FIN_TEXT and mask == self._masked and n <= self._max:
                if end > size:
                    break
                payload = buffer[start:end]
                try:
                    text = (_masked(payload, buffer[head:start]) if mask else payload).decode()
                except UnicodeDecodeError:
                    return self._give_up(out, at)
                out.append(text)
            elif first in (_PING, _PONG) and n <= _MAX_CONTROL:
                if end > size:
                    break
                out.append(bytes(buffer[at:end]))  # a whole frame: wsproto answers it
            else:
                return self._give_up(out, at)
            at = end
        del buffer[:at]
        return out

    def _give_up(self, out: list[str | bytes], at: int) -> list[str | bytes]:
        """From ``at`` on, everything is wsproto's."""
        self.active = False
        rest = bytes(self._buffer[at:])
        self._buffer = bytearray()
        if rest:
            out.append(rest)
        return out

"""The one frame an MCP message needs, written without wsproto's per-frame work.

Every message this transport sends is one whole text message in one final frame, and
neither trimcp end offers an extension, so the frame is a fixed first byte, the
length, and (from a client) a masking key and the masked payload. wsproto builds the
same bytes through an event object, a copy of the payload into a ``bytearray``, the
extension loop and four ``translate`` calls for the mask: about a sixth of a busy
client's CPU. Here the mask is one XOR of two integers, and the payload is the UTF-8
the wire encoder already produced (wsproto takes a ``str``, so it was decoded only to
be encoded again). A property test checks the bytes against wsproto's for the same key.

Masking keys come from :func:`os.urandom`, as wsproto's do, drawn
:data:`KEYS_PER_DRAW` at a time rather than one system call per frame: RFC 6455
section 5.3 asks for keys from a strong source of entropy that a peer cannot predict
from earlier frames, which a block of ``urandom`` bytes used once each still is.
"""

from __future__ import annotations

import os
import struct
from typing import Final, final

__all__ = ["KEYS_PER_DRAW", "MaskingKeys", "text_frame"]

#: Masking keys drawn from the system per :func:`os.urandom` call (4 bytes each).
KEYS_PER_DRAW: Final = 64

_FIN_TEXT: Final = 0x81  # FIN, no RSV bit, opcode 1 (text)
_MASKED: Final = 0x80
_LENGTH_16: Final = 126
_LENGTH_64: Final = 127


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
    mask = (key * (n // 4 + 1))[:n]
    masked = int.from_bytes(payload, "little") ^ int.from_bytes(mask, "little")
    return header + key + masked.to_bytes(n, "little")

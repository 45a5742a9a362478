"""Header values of the stateless era (2026-07-28): plain, or ``=?base64?...?=``.

``Mcp-Name`` and ``Mcp-Param-*`` carry values taken from the request body. A value that
is not plain printable ASCII without surrounding whitespace, or that looks like the
encoding itself, travels as ``=?base64?<base64 of its UTF-8>?=`` (markers lower-case,
case-sensitive). Both ends use these two functions, so what one writes the other reads.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

__all__ = ["NAME_PARAM", "decode_header_value", "encode_header_value"]

NAME_PARAM: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""The params member each method's ``Mcp-Name`` header carries."""

_SENTINEL: Final = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)


def encode_header_value(value: str) -> str:
    """``value`` as is when it is safe in a header, else its base64 form (see the doc)."""
    plain = (
        value.isascii()
        and value.isprintable()
        and value == value.strip()
        and not _SENTINEL.match(value)
    )
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str) -> str | None:
    """The text a header value stands for; ``None`` when it is malformed (bad base64,
    bad UTF-8, or control characters in a plain value)."""
    match = _SENTINEL.match(value)
    if match is None:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            return None
        return value
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None

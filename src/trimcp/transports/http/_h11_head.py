"""Response heads for the h11 engine: the ``Date`` field, and header fields checked by
two patterns instead of h11's four calls per field.

h11 checks every field of a response it is handed (each name and value made bytes and
matched against its grammar, one Python call apiece: sixteen for a JSON answer's four
fields), unless the event says its fields came from h11's own parser (``_parsed``). A
head whose fields are all bytes, its names tokens and its values visible ASCII with
inner spaces or tabs (a grammar no wider than h11's), is handed over as parsed: a
C-level match of the names and of the values, each joined by line breaks, replaces
those calls. Anything else (a ``str``, a byte outside visible ASCII, a malformed
field) goes through h11's own checks as before and is accepted or refused exactly as
h11 would. h11 still lower-cases
the names and checks ``Content-Length`` and ``Transfer-Encoding`` either way.
"""

from __future__ import annotations

import email.utils
import re
import time
from itertools import chain
from operator import itemgetter
from typing import Any, Final

import h11

__all__ = ["NAMES", "VALUES", "date_field", "response"]

_TOKEN: Final = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_VALUE: Final = rb"(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)?"
#: The names of a head, one per line: tokens.
NAMES: Final = re.compile(rb"%s(?:\n%s)*" % (_TOKEN, _TOKEN))
#: The values of a head, one per line: visible ASCII, inner spaces or tabs (none of
#: which is a line break, so lines and fields correspond when the count agrees).
VALUES: Final = re.compile(rb"%s(?:\n%s)*" % (_VALUE, _VALUE))
_NAME: Final = itemgetter(0)
_FIELD_VALUE: Final = itemgetter(1)


def _takes_parsed() -> bool:
    """Whether this h11's events take ``_parsed`` (else every head is checked)."""
    try:
        h11.Response(status_code=200, headers=[(b"a", b"b")], _parsed=True)
    except TypeError:
        return False
    return True


_PARSED: Final = _takes_parsed()
_BYTES: Final = {bytes}


def response(status: int, headers: list[tuple[bytes, bytes]]) -> h11.Response:
    """An ``h11.Response`` of ``status`` with ``headers``; fields matching
    :data:`NAMES` and :data:`VALUES` are not checked again by h11 (see the module doc)."""
    if _PARSED and headers and set(map(type, chain.from_iterable(headers))) == _BYTES:
        # (bytes only, no bytearray: h11 takes a parsed head's fields as they are)
        names = b"\n".join(map(_NAME, headers))
        values = b"\n".join(map(_FIELD_VALUE, headers))
        lines = len(headers) - 1  # a line break inside a field never passes
        if (
            names.count(b"\n") == lines
            and values.count(b"\n") == lines
            and NAMES.fullmatch(names) is not None
            and VALUES.fullmatch(values) is not None
        ):
            parsed: Any = {"_parsed": True}
            return h11.Response(status_code=status, headers=headers, **parsed)
    return h11.Response(status_code=status, headers=headers)


class _DateCache:
    """The ``Date`` field, made once per second."""

    second = -1
    field = (b"date", b"")

    @classmethod
    def now(cls) -> tuple[bytes, bytes]:
        second = int(time.time())
        if second != cls.second:
            cls.field = (b"date", email.utils.formatdate(second, usegmt=True).encode())
            cls.second = second
        return cls.field


date_field: Final = _DateCache.now

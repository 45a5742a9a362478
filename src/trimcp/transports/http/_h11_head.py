"""Response heads for the h11 engine: the ``Date`` field, header fields checked by two
patterns instead of h11's four calls per field, and whole responses framed by a head
checked once.

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

A whole response (its body in one piece, ``Content-Length`` saying so) goes through
:func:`send_whole`, the server's side of the client's ``_client_heads``: a client's
answers carry the same fields but for their length (type, session id, the date of this
second), so each head is built and checked once (at most :data:`WHOLE_HEADS` kept,
none longer than :data:`WHOLE_HEAD_BYTES`; a connection keeps none between responses).
h11 is handed a stand-in, the same head with ``Content-Length: 0``: its state moves
exactly as for the real response (it frames the body by that header only, and adds
``Connection: close`` itself where keep-alive ends), and the bytes it writes for it
are the real head once the length line says the body's length. The body follows
them, without an ``h11.Data`` event of its own.
"""

from __future__ import annotations

import email.utils
import re
import time
from itertools import chain
from operator import itemgetter
from typing import Any, Final

import h11

from ._bounded_table import keep
from ._client_heads import END_OF_MESSAGE

__all__ = ["NAMES", "VALUES", "date_field", "response", "send_whole"]

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


_LENGTH: Final = b"content-length"
#: The stand-in's length field, and its line as h11 writes it (a line break before
#: it: the status line's or the previous field's, never part of a value).
_LENGTH_ZERO: Final = (_LENGTH, b"0")
_LENGTH_ZERO_LINE: Final = b"\r\ncontent-length: 0\r\n"
_BODILESS: Final = frozenset({204, 304})
_FRAMING: Final = frozenset({_LENGTH, b"transfer-encoding", "content-length", "transfer-encoding"})
#: The most stand-ins kept at once (a table emptied when full, see ``_bounded_table``),
#: and the longest head kept.
WHOLE_HEADS: Final = 64
WHOLE_HEAD_BYTES: Final = 1024

_stand_ins: dict[tuple[object, ...], h11.Response] = {}


def send_whole(
    conn: h11.Connection, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> bytes | None:
    """The bytes of the whole response (``status``, ``headers``, ``body``), ``conn``
    moved past it as by sending it through h11 (see the module doc); ``None``, with
    nothing sent, unless ``headers`` hold exactly one ``Content-Length``, which is
    ``body``'s length written plainly, after a status that has a body (else send it
    through h11 as usual). Raises what h11 raises for a head it would not send."""
    fields = []
    length = None
    for field in headers:  # a loop, not a comprehension: one call less
        name = field[0]
        if name == _LENGTH:
            if length is not None:
                return None
            length = field[1]
            field = _LENGTH_ZERO  # in its place: h11 writes the fields in order
        elif name.lower() in _FRAMING:
            return None  # another spelling of a framing field: h11's to judge
        fields.append(field)
    size = len(body)
    if length != b"%d" % size or status in _BODILESS or status < 200:
        return None  # (h11 frames no body after those statuses: it refuses one)
    key = (status, *fields)
    event = _stand_ins.get(key)
    made = event is None
    if event is None:
        event = response(status, fields)
    head = conn.send(event)
    conn.send(END_OF_MESSAGE)
    assert head is not None
    if made and len(head) <= WHOLE_HEAD_BYTES:
        keep(_stand_ins, key, event, WHOLE_HEADS)
    if _LENGTH_ZERO_LINE not in head:  # (h11 writes every field it is given, as given)
        raise h11.LocalProtocolError("the response head lost its Content-Length")
    return head.replace(_LENGTH_ZERO_LINE, b"\r\ncontent-length: %d\r\n" % size, 1) + body

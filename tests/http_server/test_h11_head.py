"""Response heads on the h11 engine: a head whose fields match the engine's own
pattern skips h11's per-field checks, and is written (or refused) exactly as h11
alone would write (or refuse) it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import h11
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from trimcp.transports.http import _h11_head
from trimcp.transports.http._h11_head import NAMES, VALUES, date_field, response

# Bytes chosen to hit every edge of the grammar: token characters, separators that are
# not (colon, space, comma, quotes), control bytes, obs-text, CR and LF.
_ALPHABET = b'aZ09-!~_:;, \t"()\r\n\x00\x7f\x80\xff=/'
_bytes = st.lists(st.sampled_from(list(_ALPHABET)), max_size=12).map(bytes)
_names = st.one_of(
    st.sampled_from([b"content-type", b"Content-Length", b"mcp-session-id", b"date", b"x"]),
    _bytes,
)
_values = st.one_of(st.sampled_from([b"application/json", b"12", b"0", b"a b", b""]), _bytes)
_fields = st.lists(st.tuples(_names, _values), max_size=5)


def _head(
    build: Callable[[int, list[tuple[bytes, bytes]]], h11.Response],
    status: int,
    fields: list[tuple[bytes, bytes]],
) -> bytes | type:
    """The bytes a server connection writes for the head, or the error it raises."""
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
    conn.next_event()
    conn.next_event()
    try:
        return conn.send(build(status, fields))
    except h11.LocalProtocolError:
        return h11.LocalProtocolError


def _h11_alone(status: int, fields: list[tuple[bytes, bytes]]) -> h11.Response:
    return h11.Response(status_code=status, headers=fields)


@given(st.sampled_from([200, 202, 204, 304, 404]), _fields)
@example(200, [(b"content-length", b"1, 1")])
@example(200, [(b"content-type", b"a\x80")])
@example(200, [(b"x", b" padded ")])
@example(200, [(b"a:", b"b")])
@example(200, [(b"x", b"1\nb:v")])
@example(200, [(b"x", b"1\nb"), (b"c", b"v")])
def test_a_head_is_written_or_refused_as_h11_alone_would(
    status: int, fields: list[tuple[bytes, bytes]]
) -> None:
    assert _head(response, status, list(fields)) == _head(_h11_alone, status, list(fields))


@given(_fields)
def test_only_fields_h11_accepts_skip_its_checks(fields: list[tuple[bytes, bytes]]) -> None:
    # (framing fields aside: h11 checks their values on either path)
    fields = [f for f in fields if f[0].lower() not in (b"content-length", b"transfer-encoding")]
    if _checked_by_pattern(fields):
        h11.Response(status_code=200, headers=fields)  # h11 accepts every one of them


def _checked_by_pattern(fields: list[tuple[bytes, bytes]]) -> bool:
    names = b"\n".join(f[0] for f in fields)
    values = b"\n".join(f[1] for f in fields)
    lines = len(fields) - 1
    return bool(
        fields
        and names.count(b"\n") == lines
        and values.count(b"\n") == lines
        and NAMES.fullmatch(names)
        and VALUES.fullmatch(values)
    )


def test_a_str_or_bytearray_field_goes_through_h11s_checks() -> None:
    mixed: Any = [("content-type", "application/json"), (bytearray(b"x"), b"1")]
    head = response(200, mixed)
    assert list(head.headers) == [(b"content-type", b"application/json"), (b"x", b"1")]
    with pytest.raises(h11.LocalProtocolError):
        response(200, [(b"x", b"a\r\nb")])


def test_an_h11_without_parsed_heads_checks_every_head(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_h11_head, "_PARSED", False)
    with pytest.raises(h11.LocalProtocolError):
        response(200, [(b"bad name", b"1")])
    assert list(response(200, [(b"x", b"1")]).headers) == [(b"x", b"1")]


def test_the_date_field_is_made_once_per_second() -> None:
    first = date_field()
    assert first[0] == b"date"
    assert first[1].endswith(b" GMT")
    assert date_field() is first or date_field()[1] != first[1]

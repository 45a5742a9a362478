"""Response heads on the h11 engine: a head whose fields match the engine's own
pattern skips h11's per-field checks, and is written (or refused) exactly as h11
alone would write (or refuse) it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import h11
import pytest
from hypothesis import example, given, settings
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


# Whole responses (``send_whole``): the same bytes and the same h11 state as sending the
# response through h11 alone, or nothing at all (then h11 alone sends it as before).

_REQUESTS = {
    "keep-alive": b"POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n\r\n",
    "close": b"POST / HTTP/1.1\r\nhost: a\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
    "http/1.0": b"POST / HTTP/1.0\r\ncontent-length: 0\r\n\r\n",
}
_LENGTHS = st.sampled_from(
    ["right", "right", "right", "wrong", "twice", "padded", "spelled", "none"]
)
# Mostly heads h11 sends (the path taken), sometimes anything (refused alike).
_token = st.text("abcxyz-0123456789", min_size=1, max_size=8).map(str.encode)
_visible = st.text("abc xyz;=/,0123456789", max_size=12).map(lambda v: v.strip().encode())
_sendable = st.lists(st.tuples(_token, _visible), max_size=5)


def _server(request: str) -> h11.Connection:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(_REQUESTS[request])
    assert isinstance(conn.next_event(), h11.Request)
    assert isinstance(conn.next_event(), h11.EndOfMessage)
    return conn


def _with_length(
    fields: list[tuple[bytes, bytes]], at: int, how: str, body: bytes
) -> list[tuple[bytes, bytes]]:
    value = b"%d" % len(body)
    fields = [f for f in fields if f[0].lower() not in (b"content-length", b"transfer-encoding")]
    at = min(at, len(fields))
    added = {
        "right": [(b"content-length", value)],
        "wrong": [(b"content-length", b"%d" % (len(body) + 1))],
        "twice": [(b"content-length", value), (b"content-length", value)],
        "padded": [(b"content-length", b"0" + value)],
        "spelled": [(b"Content-Length", value)],
        "none": [],
    }[how]
    return [*fields[:at], *added, *fields[at:]]


def _state(conn: h11.Connection) -> tuple[object, ...]:
    return (conn.our_state, conn.their_state, conn.their_http_version, conn._cstate.keep_alive)


def _h11_whole(
    conn: h11.Connection, status: int, fields: list[tuple[bytes, bytes]], body: bytes
) -> bytes | type:
    try:
        data = conn.send(h11.Response(status_code=status, headers=fields)) or b""
        if body:
            data += conn.send(h11.Data(data=body)) or b""
        return data + (conn.send(h11.EndOfMessage()) or b"")
    except h11.LocalProtocolError:
        return h11.LocalProtocolError


@settings(max_examples=300)
@given(
    st.sampled_from([200, 200, 201, 202, 204, 304, 400, 404, 500, 101]),
    _sendable | _fields,
    st.integers(0, 5),
    _LENGTHS,
    st.binary(max_size=40),
    st.sampled_from(sorted(_REQUESTS)),
)
@example(200, [(b"date", b"x")], 1, "right", b"{}", "close")
@example(200, [(b"x", b"content-length: 0")], 0, "right", b"{}", "keep-alive")
@example(204, [], 0, "right", b"{}", "keep-alive")
@example(200, [(b"transfer-encoding", b"chunked")], 0, "right", b"{}", "keep-alive")
def test_a_whole_response_is_what_h11_alone_would_send(
    status: int,
    fields: list[tuple[bytes, bytes]],
    at: int,
    how: str,
    body: bytes,
    request: str,
) -> None:
    headers = _with_length(fields, at, how, body)
    ours, alone = _server(request), _server(request)
    expected = _h11_whole(alone, status, list(headers), body)
    try:
        sent = _h11_head.send_whole(ours, status, list(headers), body)
    except h11.LocalProtocolError:
        assert expected is h11.LocalProtocolError  # refused only where h11 refuses
        return
    if sent is None:  # not taken: nothing sent, h11 alone goes on from here
        assert _state(ours) == _state(_server(request))
        assert _h11_whole(ours, status, list(headers), body) == expected
        return
    assert how == "right"
    assert status >= 200
    assert status not in (204, 304)
    assert sent == expected
    assert _state(ours) == _state(alone)


def test_whole_heads_are_checked_once_and_kept_within_bounds() -> None:
    _h11_head._stand_ins.clear()
    fields = [(b"content-type", b"application/json"), (b"content-length", b"2")]
    first = _h11_head.send_whole(_server("keep-alive"), 200, list(fields), b"{}")
    assert first is not None
    assert first.endswith(b"\r\n\r\n{}")
    (kept,) = _h11_head._stand_ins.values()
    fields[1] = (b"content-length", b"4")
    again = _h11_head.send_whole(_server("keep-alive"), 200, list(fields), b"[{}]")
    assert again is not None
    assert b"\r\ncontent-length: 4\r\n" in again
    assert list(_h11_head._stand_ins.values()) == [kept]  # one head for both lengths
    for n in range(_h11_head.WHOLE_HEADS + 5):  # ever new fields: the table stays bounded
        other = [(b"x", b"%d" % n), (b"content-length", b"2")]
        assert _h11_head.send_whole(_server("keep-alive"), 200, other, b"{}") is not None
        assert len(_h11_head._stand_ins) <= _h11_head.WHOLE_HEADS
    _h11_head._stand_ins.clear()
    long = [(b"x", b"v" * _h11_head.WHOLE_HEAD_BYTES), (b"content-length", b"2")]
    assert _h11_head.send_whole(_server("keep-alive"), 200, long, b"{}") is not None
    assert not _h11_head._stand_ins  # a long head is sent, not kept

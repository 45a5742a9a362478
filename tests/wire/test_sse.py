"""SSE encoding and the WHATWG decoding rules (plus the documented deviations)."""

from __future__ import annotations

import pytest

from trimcp.wire import (
    LocalProtocolError,
    RemoteProtocolError,
    SSEDecoder,
    SSEEvent,
    encode_comment,
    encode_sse,
)


def _decode(data: bytes, **kwargs: int) -> tuple[list[SSEEvent], SSEDecoder]:
    decoder = SSEDecoder(**kwargs)
    return decoder.feed(data), decoder


# ---------------------------------------------------------------- encoding


def test_encode_simple_event() -> None:
    assert encode_sse(data='{"a":1}') == b'data: {"a":1}\n\n'
    assert encode_sse(data="x", event="message", id="7", retry=1000) == (
        b"event: message\nid: 7\nretry: 1000\ndata: x\n\n"
    )


def test_encode_multiline_data() -> None:
    assert encode_sse(data="a\nb\r\nc\rd") == b"data: a\ndata: b\ndata: c\ndata: d\n\n"
    assert encode_sse(data="a\n") == b"data: a\ndata: \n\n"
    assert encode_sse(data="") == b"data: \n\n"


def test_encode_priming_event() -> None:
    assert encode_sse(data=None, id="x") == b"id: x\ndata: \n\n"
    assert encode_sse(data=None, id="s-1", retry=500) == b"id: s-1\nretry: 500\ndata: \n\n"
    assert encode_sse(data=None, retry=0) == b"retry: 0\ndata: \n\n"


def test_encode_utf8() -> None:
    assert encode_sse(data="é", id="ü") == "id: ü\ndata: é\n\n".encode()


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\0b", "\n"])
def test_encode_refuses_control_characters_in_id_and_event(bad: str) -> None:
    with pytest.raises(LocalProtocolError):
        encode_sse(data="x", id=bad)
    with pytest.raises(LocalProtocolError):
        encode_sse(data="x", event=bad)


@pytest.mark.parametrize("retry", [-1, True, 1.5, "10"])
def test_encode_refuses_bad_retry(retry: object) -> None:
    with pytest.raises(LocalProtocolError):
        encode_sse(data="x", retry=retry)  # type: ignore[arg-type]


def test_encode_refuses_nothing_to_send_and_bad_data() -> None:
    with pytest.raises(LocalProtocolError):
        encode_sse(data=None)
    with pytest.raises(LocalProtocolError):
        encode_sse(data=None, event="e")
    with pytest.raises(LocalProtocolError):
        encode_sse(data=b"x")  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        encode_sse(data="\ud800")
    with pytest.raises(LocalProtocolError):
        encode_sse(data="x", id=5)  # type: ignore[arg-type]


def test_encode_comment() -> None:
    assert encode_comment() == b":\n\n"
    assert encode_comment("keep-alive") == b": keep-alive\n\n"
    assert encode_comment("a\nb\r\n\nc") == b": a\n: b\n:\n: c\n\n"
    events, _ = _decode(encode_comment("ping") + encode_sse(data="x"))
    assert events == [SSEEvent(data="x")]


# ---------------------------------------------------------------- decoding


def test_decode_basic_event() -> None:
    events, decoder = _decode(b"event: update\nid: 42\nretry: 3000\ndata: hello\n\n")
    assert events == [SSEEvent(data="hello", event="update", id="42", retry=3000)]
    assert decoder.last_event_id == "42"
    assert decoder.retry == 3000


def test_decode_multiline_data_is_joined_with_lf() -> None:
    events, _ = _decode(b"data: a\ndata:b\ndata\ndata:  c\n\n")
    assert events == [SSEEvent(data="a\nb\n\n c")]


@pytest.mark.parametrize("newline", [b"\n", b"\r", b"\r\n"])
def test_all_line_endings(newline: bytes) -> None:
    stream = b"data: 1" + newline + newline + b"data: 2" + newline + b"data: 3" + newline * 2
    events, _ = _decode(stream)
    assert events == [SSEEvent(data="1"), SSEEvent(data="2\n3")]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\r") == []
    assert decoder.feed(b"\n") == []  # the LF completes the CRLF, it is not a blank line
    assert decoder.feed(b"data: y\r") == []
    assert decoder.feed(b"\n\r\n") == [SSEEvent(data="x\ny")]


def test_cr_inside_a_chunk_does_not_swallow_the_next_chunks_lf() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\revent: e") == []
    assert decoder.feed(b"\n\n") == [SSEEvent(data="a", event="e")]


def test_cr_cr_is_two_line_ends() -> None:
    assert _decode(b"data: x\r\r")[0] == [SSEEvent(data="x")]


def test_leading_bom_is_stripped_once() -> None:
    assert _decode(b"\xef\xbb\xbfdata: x\n\n")[0] == [SSEEvent(data="x")]
    # A second BOM is part of the first line: the field name is then not "data".
    assert _decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n")[0] == []


def test_bom_split_across_chunks() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef") == []
    assert decoder.feed(b"\xbb") == []
    assert decoder.feed(b"\xbfdata: x\n\n") == [SSEEvent(data="x")]
    # A BOM-like prefix that is not a BOM is kept (and here is invalid UTF-8 in a field).
    other = SSEDecoder()
    assert other.feed(b"\xef") == []
    with pytest.raises(RemoteProtocolError):
        other.feed(b"data: x\n\n")


def test_comments_and_unknown_fields_are_ignored() -> None:
    events, _ = _decode(b": comment\n:\nfoo: bar\nDATA: no\ndata: yes\n\n")
    assert events == [SSEEvent(data="yes")]


def test_field_without_colon() -> None:
    events, decoder = _decode(b"data\n\nid\ndata: x\n\n")
    assert events == [SSEEvent(data="x", id="")]
    assert decoder.last_event_id == ""


def test_only_one_space_after_colon_is_removed() -> None:
    events, _ = _decode(b"data:  two\nevent:\tx\n\n")
    assert events == [SSEEvent(data=" two", event="\tx")]


def test_colon_in_value_is_kept() -> None:
    assert _decode(b'data: {"a":"b:c"}\n\n')[0] == [SSEEvent(data='{"a":"b:c"}')]


def test_empty_data_is_not_dispatched_but_id_and_retry_count() -> None:
    events, decoder = _decode(b"id: p1\nretry: 250\ndata: \n\n")  # the priming event
    assert events == []
    assert decoder.last_event_id == "p1"
    assert decoder.retry == 250
    events, decoder = _decode(b"id: p2\nevent: x\n\n")
    assert events == []
    assert decoder.last_event_id == "p2"
    # The event type does not leak into the next event.
    assert decoder.feed(b"data: y\n\n") == [SSEEvent(data="y")]


def test_two_empty_data_lines_dispatch_a_newline() -> None:
    assert _decode(b"data:\ndata:\n\n")[0] == [SSEEvent(data="\n")]


def test_last_event_id_persists_and_event_id_is_per_event() -> None:
    events, decoder = _decode(b"id: 1\ndata: a\n\ndata: b\n\nid:\ndata: c\n\n")
    assert events == [SSEEvent(data="a", id="1"), SSEEvent(data="b"), SSEEvent(data="c", id="")]
    assert decoder.last_event_id == ""


def test_last_event_id_changes_only_when_the_event_ends() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n")
    assert decoder.last_event_id == "1"  # event 2 is not complete: resuming must replay it
    decoder.feed(b"\n")
    assert decoder.last_event_id == "2"


def test_id_with_nul_is_ignored() -> None:
    events, decoder = _decode(b"id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n")
    assert events == [SSEEvent(data="a", id="1"), SSEEvent(data="b")]
    assert decoder.last_event_id == "1"


@pytest.mark.parametrize(
    "value", [b"", b"-1", b"1.5", b"  10", b"10 ", b"1e3", b"\xd9\xa1", b"9" * 16]
)
def test_invalid_retry_is_ignored(value: bytes) -> None:
    events, decoder = _decode(b"retry: 5\n\nretry:" + value + b"\ndata: x\n\n")
    assert events == [SSEEvent(data="x")]
    assert decoder.retry == 5


def test_retry_keeps_the_last_valid_value() -> None:
    events, decoder = _decode(b"retry: 10\ndata: a\n\nretry: 0020\ndata: b\n\n")
    assert events == [SSEEvent(data="a", retry=10), SSEEvent(data="b", retry=20)]
    assert decoder.retry == 20
    assert SSEDecoder().retry is None


def test_incomplete_event_at_eof_is_discarded_and_a_new_stream_starts() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: partial\n") == [SSEEvent(data="a", id="1")]
    assert decoder.feed(b"") == []
    assert decoder.last_event_id == "1"
    # Reconnection: the BOM is allowed again; the last event id and retry are kept.
    assert decoder.feed(b"\xef\xbb\xbfdata: b\n\n") == [SSEEvent(data="b")]
    assert decoder.last_event_id == "1"


def test_unterminated_last_line_at_eof_is_discarded() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\n\ndata: y") == [SSEEvent(data="x")]
    assert decoder.feed(b"") == []


def test_many_events_in_one_chunk() -> None:
    stream = b"".join(encode_sse(data=f'{{"n":{i}}}', id=str(i)) for i in range(1000))
    events, decoder = _decode(stream)
    assert [e.data for e in events] == [f'{{"n":{i}}}' for i in range(1000)]
    assert decoder.last_event_id == "999"


# ---------------------------------------------------------------- fatal errors


def test_oversized_event_is_fatal() -> None:
    decoder = SSEDecoder(max_event_size=20)
    with pytest.raises(RemoteProtocolError) as info:
        decoder.feed(b"data: " + b"x" * 30)
    assert info.value.fatal
    assert info.value.error_hint is None
    with pytest.raises(RemoteProtocolError) as again:
        decoder.feed(b"\n\n")
    assert again.value is info.value


def test_event_size_counts_all_its_lines() -> None:
    decoder = SSEDecoder(max_event_size=20)
    assert decoder.feed(b"data: 12345\ndata: 1\n\n") == [SSEEvent(data="12345\n1")]
    with pytest.raises(RemoteProtocolError):
        decoder.feed(b"data: 12345\ndata: 123456\n\n")


def test_endless_comment_line_is_bounded() -> None:
    decoder = SSEDecoder(max_event_size=100)
    for _ in range(10):
        assert decoder.feed(b":" + b"c" * 9) == []
    with pytest.raises(RemoteProtocolError):
        decoder.feed(b"c")
    assert len(decoder._partial) <= 100


def test_many_comment_lines_are_fine() -> None:
    decoder = SSEDecoder(max_event_size=100)
    for _ in range(100):
        assert decoder.feed(b": keep-alive\n") == []
    assert decoder.feed(b"data: x\n\n") == [SSEEvent(data="x")]


def test_events_before_a_fatal_error_are_not_lost() -> None:
    decoder = SSEDecoder(max_event_size=20)
    assert decoder.feed(b"data: ok\n\ndata: " + b"x" * 30 + b"\n\n") == [SSEEvent(data="ok")]
    with pytest.raises(RemoteProtocolError):
        decoder.feed(b"")
    with pytest.raises(RemoteProtocolError):
        decoder.feed(b"data: more\n\n")


def test_invalid_utf8_is_fatal() -> None:
    decoder = SSEDecoder()
    with pytest.raises(RemoteProtocolError) as info:
        decoder.feed(b"data: \xff\n\n")
    assert info.value.fatal
    assert info.value.error_hint is None
    assert "UTF-8" in str(info.value)


def test_invalid_utf8_in_a_comment_is_ignored() -> None:
    assert _decode(b": \xff\ndata: x\n\n")[0] == [SSEEvent(data="x")]


def test_multibyte_characters_split_across_chunks() -> None:
    decoder = SSEDecoder()
    data = "data: héllo 🎉\n\n".encode()
    events: list[SSEEvent] = []
    for index in range(len(data)):
        events += decoder.feed(data[index : index + 1])
    assert events == [SSEEvent(data="héllo 🎉")]


def test_sse_event_validation() -> None:
    with pytest.raises(LocalProtocolError):
        SSEEvent(data=None)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        SSEEvent(data="x", retry=False)
    with pytest.raises(LocalProtocolError):
        SSEEvent(data="x", id=5)  # type: ignore[arg-type]
    assert SSEEvent(data="x", id=None, retry=None).event == "message"
    with pytest.raises(TypeError):
        SSEEvent("x")  # type: ignore[call-arg]
    assert hash(SSEEvent(data="x")) == hash(SSEEvent(data="x"))

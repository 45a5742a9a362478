"""NDJSON framing: lines, CRLF, blank lines, EOF, and the B26 oversized-line bound."""

from __future__ import annotations

import tracemalloc

import pytest

from trimcp.wire import (
    DEFAULT_MAX_LINE,
    INVALID_REQUEST,
    LineFramer,
    LocalProtocolError,
    RemoteProtocolError,
)


def _at_eof(framer: LineFramer) -> bool:
    return framer.eof  # a call, so that mypy does not narrow the property between asserts


def _drain(framer: LineFramer) -> list[bytes]:
    lines = []
    while (line := framer.next_line()) is not None:
        lines.append(line)
    return lines


def test_lines_are_split_and_terminators_removed() -> None:
    framer = LineFramer()
    framer.feed(b'{"a":1}\n{"b":2}\r\n{"c"')
    assert _drain(framer) == [b'{"a":1}', b'{"b":2}']
    framer.feed(b":3}\n")
    assert _drain(framer) == [b'{"c":3}']
    assert not framer.eof


def test_only_one_trailing_cr_is_stripped_and_inner_cr_kept() -> None:
    framer = LineFramer()
    framer.feed(b"a\r\r\nb\rc\n")
    assert _drain(framer) == [b"a\r", b"b\rc"]


def test_crlf_split_across_chunks() -> None:
    framer = LineFramer()
    framer.feed(b"abc\r")
    assert framer.next_line() is None
    framer.feed(b"\n")
    assert _drain(framer) == [b"abc"]


def test_blank_lines_are_skipped() -> None:
    framer = LineFramer()
    framer.feed(b"\n\r\n  \t \nx\n \r\n\n y \n")
    assert _drain(framer) == [b"x", b" y "]


def test_eof_delivers_a_final_partial_line() -> None:
    framer = LineFramer()
    framer.feed(b"one\ntwo")
    assert _drain(framer) == [b"one"]
    assert not _at_eof(framer)
    framer.feed(b"")
    assert not _at_eof(framer)  # "two" has not been taken yet
    assert framer.next_line() == b"two"
    assert _at_eof(framer)
    assert framer.next_line() is None
    framer.feed(b"")  # a second EOF is harmless
    assert _at_eof(framer)


def test_eof_with_a_partial_crlf_or_blank_line() -> None:
    framer = LineFramer()
    framer.feed(b"x\r")
    framer.feed(b"")
    assert _drain(framer) == [b"x"]
    blank = LineFramer()
    blank.feed(b"  ")
    blank.feed(b"")
    assert _drain(blank) == []
    assert blank.eof


def test_eof_on_an_empty_stream() -> None:
    framer = LineFramer()
    assert not framer.eof
    framer.feed(b"")
    assert framer.eof


def test_data_after_eof_is_misuse() -> None:
    framer = LineFramer()
    framer.feed(b"")
    with pytest.raises(LocalProtocolError):
        framer.feed(b"x")


def test_invalid_max_line() -> None:
    with pytest.raises(LocalProtocolError):
        LineFramer(max_line=0)


def test_default_limit() -> None:
    assert DEFAULT_MAX_LINE == 4 * 1024 * 1024


def _assert_too_large(framer: LineFramer) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as info:
        framer.next_line()
    exc = info.value
    assert exc.fatal
    assert exc.error_hint is not None
    assert exc.error_hint.id is None
    assert exc.error_hint.error.code == INVALID_REQUEST
    assert "message too large" in exc.error_hint.error.message
    return exc


def test_line_at_the_limit_is_accepted() -> None:
    framer = LineFramer(max_line=10)
    framer.feed(b"0123456789\n")
    assert framer.next_line() == b"0123456789"
    framer.feed(b"01234")
    framer.feed(b"56789")
    framer.feed(b"\n")
    assert framer.next_line() == b"0123456789"


@pytest.mark.parametrize(
    "chunks",
    [
        [b"01234567890\n"],  # complete but too long, in one chunk
        [b"012345", b"67890"],  # partial, too long, no newline yet
        [b"0123456789", b"0"],
        [b"ok\n01234567890"],  # too-long tail after a good line
    ],
)
def test_overlong_line_is_fatal(chunks: list[bytes]) -> None:
    framer = LineFramer(max_line=10)
    taken: list[bytes] = []

    def feed_all() -> None:
        for chunk in chunks:
            framer.feed(chunk)
            taken.extend(_drain(framer))

    with pytest.raises(RemoteProtocolError):
        feed_all()
    assert taken in ([], [b"ok"])
    # Fatal: every later call raises again, and later data is dropped, not buffered.
    framer.feed(b"good\n")
    _assert_too_large(framer)
    _assert_too_large(framer)
    assert not framer.eof


def test_lines_before_the_overflow_are_delivered_first() -> None:
    framer = LineFramer(max_line=8)
    framer.feed(b"a\nb\n" + b"x" * 20)
    assert framer.next_line() == b"a"
    assert framer.next_line() == b"b"
    _assert_too_large(framer)


def test_overflow_never_buffers_more_than_limit_plus_chunk() -> None:
    framer = LineFramer(max_line=100)
    for _ in range(1000):
        framer.feed(b"y" * 30)
        assert len(framer._partial) <= 100
        if framer._overflow:
            break
    assert framer._overflow
    framer.feed(b"z" * 1000)
    assert len(framer._partial) == 0
    _assert_too_large(framer)


def test_hundred_megabytes_without_newline_in_64k_chunks() -> None:  # B26
    chunk = b"x" * (64 * 1024)
    framer = LineFramer()
    tracemalloc.start()
    try:
        raised_after = None
        error: RemoteProtocolError | None = None
        for index in range(100 * 16):  # 100 MiB
            framer.feed(chunk)
            try:
                framer.next_line()
            except RemoteProtocolError as exc:
                error = exc
                if raised_after is None:
                    raised_after = index + 1
            assert len(framer._partial) <= DEFAULT_MAX_LINE
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The error comes as soon as the partial line passes 4 MiB: the 65th chunk.
    assert raised_after == DEFAULT_MAX_LINE // len(chunk) + 1
    assert error is not None
    assert error.fatal
    # Memory: bounded by max_line (+ bytearray over-allocation), never anywhere near 100 MB.
    assert peak < DEFAULT_MAX_LINE * 1.5 + 4 * len(chunk)


def test_long_line_in_small_chunks_is_linear() -> None:
    # 2 MiB arriving 16 bytes at a time: a rescanning framer would do ~10**11 byte comparisons.
    framer = LineFramer()
    piece = b"a" * 16
    for _ in range(2 * 1024 * 1024 // 16):
        framer.feed(piece)
    assert framer.next_line() is None
    framer.feed(b"\n")
    line = framer.next_line()
    assert line is not None
    assert len(line) == 2 * 1024 * 1024


def test_many_lines_in_one_chunk() -> None:
    framer = LineFramer()
    framer.feed(b"".join(b"%d\n" % i for i in range(10_000)))
    assert _drain(framer) == [b"%d" % i for i in range(10_000)]


def test_returns_bytes() -> None:
    framer = LineFramer()
    framer.feed(b"ab")
    framer.feed(b"c\nd\n")
    lines = _drain(framer)
    assert lines == [b"abc", b"d"]
    assert all(type(line) is bytes for line in lines)

"""The header guards agree with their plain definitions for any header list: the
smuggling shapes ``check_framing`` refuses and the ``Accept`` values ``accepts`` takes
(the guards scan the headers with loops of their own, once per request)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http._guards import Headers, HttpError, accepts, check_framing

_NAMES = st.sampled_from([b"content-length", b"transfer-encoding", b"accept", b"host", b"x-a"])
_VALUES = st.sampled_from(
    [b"", b"5", b" 5 ", b"5,5", b"x", b"chunked", b"*/*", b"application/json",
     b"text/event-stream", b"text/*", b"application/*;q=1", b"application/json, text/*"]
)  # fmt: skip
_HEADERS = st.lists(st.tuples(_NAMES, _VALUES), max_size=6)


def _framing_refusal(pairs: list[tuple[bytes, bytes]]) -> str | None:
    """Which smuggling shape ``pairs`` is, by the plain rules (``None``: none)."""
    lengths = [v.decode() for n, v in pairs if n == b"content-length"]
    encodings = [v for n, v in pairs if n == b"transfer-encoding"]
    if encodings and lengths:
        return "both"
    if len(lengths) > 1 or any("," in value for value in lengths):
        return "more than one"
    if lengths and not lengths[0].strip().isdigit():
        return "invalid"
    return None


@given(_HEADERS)
def test_check_framing_refuses_exactly_the_smuggling_shapes(
    pairs: list[tuple[bytes, bytes]],
) -> None:
    expected = _framing_refusal(pairs)
    if expected is None:
        check_framing(Headers(pairs), max_header_bytes=1 << 16)
        return
    with pytest.raises(HttpError) as refused:
        check_framing(Headers(pairs), max_header_bytes=1 << 16)
    assert refused.value.status == 400
    assert refused.value.close
    assert expected in refused.value.message.lower()


def _media(value: str) -> set[str]:
    return {part.split(";", 1)[0].strip().lower() for part in value.split(",")} if value else set()


@given(_HEADERS)
def test_accepts_takes_exactly_what_every_media_type_matches(
    pairs: list[tuple[bytes, bytes]],
) -> None:
    wanted = ("application/json", "text/event-stream")
    offered: set[str] = set()
    for name, value in pairs:
        if name == b"accept":
            offered |= _media(value.decode())
    expected = "*/*" in offered or all(
        mt in offered or mt.split("/")[0] + "/*" in offered for mt in wanted
    )
    assert accepts(Headers(pairs), *wanted) is expected

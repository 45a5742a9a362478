"""Request header pairs: shared between requests (the same pairs, one copy, bounded),
read from h11 at C speed, and looked up as a plain scan would."""

from __future__ import annotations

import h11
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http import _header_pairs
from trimcp.transports.http._guards import Headers
from trimcp.transports.http._header_pairs import (
    SHARED_NAMES,
    SHARED_PAIRS,
    lower_pairs,
    shared_pairs,
)

names = st.sampled_from([*sorted(SHARED_NAMES), b"authorization", b"cookie", b"x-other"])
values = st.binary(max_size=300)
header_lists = st.lists(st.tuples(names, values), max_size=12)


@given(st.lists(header_lists, max_size=40))
def test_the_pairs_are_those_given_and_the_table_stays_bounded(
    requests: list[list[tuple[bytes, bytes]]],
) -> None:
    for headers in requests:
        out = shared_pairs(headers)
        assert out == headers
        assert out is not headers
        assert len(_header_pairs._pairs) <= SHARED_PAIRS
        for name, value in _header_pairs._pairs:
            assert name in SHARED_NAMES  # never a credential
            assert len(value) <= _header_pairs.SHARED_VALUE_BYTES


def fresh(name: bytes, value: bytes) -> tuple[bytes, bytes]:
    """A pair made at run time, as a parser makes it (not a shared constant)."""
    return bytes(bytearray(name)), bytes(bytearray(value))


def test_a_repeated_pair_is_one_object() -> None:
    first = shared_pairs([fresh(b"host", b"127.0.0.1:80"), fresh(b"authorization", b"Bearer a")])
    second = shared_pairs([fresh(b"host", b"127.0.0.1:80"), fresh(b"authorization", b"Bearer a")])
    assert first[0] is second[0]
    assert first[1] is not second[1]  # credentials are never shared


def test_a_full_table_is_emptied_not_grown() -> None:
    for n in range(SHARED_PAIRS * 3):
        shared_pairs([(b"content-length", str(n).encode())])
        assert len(_header_pairs._pairs) <= SHARED_PAIRS


# Header names as a client may send them: any case, some repeated, some unusual.
any_names = st.sampled_from(
    [b"Host", b"host", b"ACCEPT", b"Content-Length", b"mcp-session-id", b"X-Odd_Name", b"a"]
)
any_headers = st.lists(st.tuples(any_names, st.binary(max_size=20)), max_size=10)
# Values h11 accepts: visible bytes, inner spaces.
h11_values = st.lists(st.sampled_from([b"a", b"1", b"/", b" ", b"\xe9", b"*"]), max_size=8).map(
    lambda parts: b"".join(parts).strip()
)


@given(st.lists(st.tuples(any_names, h11_values), max_size=10))
def test_lower_pairs_reads_h11_headers_as_iterating_them_does(
    raw: list[tuple[bytes, bytes]],
) -> None:
    """h11's own triples are zipped at C speed; the pairs are those its Sequence gives
    (lower-case names, values as sent), and anything else is iterated as it is."""
    cleaned = [
        (name, value)
        for name, value in raw
        if name.lower() not in (b"host", b"content-length")  # h11 checks those itself
    ]
    request = h11.Request(method="POST", target="/mcp", headers=[(b"host", b"x"), *cleaned])
    assert list(lower_pairs(request.headers)) == list(request.headers)
    assert list(lower_pairs(cleaned)) == cleaned


@given(any_headers)
def test_headers_reads_as_a_plain_scan_of_the_pairs(raw: list[tuple[bytes, bytes]]) -> None:
    """``Headers`` (lower-casing, size, first value, every value, names) is what a
    straightforward scan of the pairs says, for lists and for other iterables."""
    for given_as in (raw, iter(raw)):
        headers = Headers(given_as)
        lowered = [(name.lower(), value) for name, value in raw]
        assert headers.size == sum(len(name) + len(value) for name, value in raw)
        for name in ("host", "accept", "content-length", "x-odd_name", "missing"):
            key = name.encode()
            found = [value.decode("latin-1") for n, value in lowered if n == key]
            assert headers.get_all(name) == found
            assert headers.get(name) == (found[0] if found else None)
        assert headers.names() == list(dict.fromkeys(n.decode("latin-1") for n, _ in lowered))

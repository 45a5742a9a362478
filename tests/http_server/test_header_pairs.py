"""Request header pairs shared between requests: the same pairs, one copy, bounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http import _header_pairs
from trimcp.transports.http._header_pairs import SHARED_NAMES, SHARED_PAIRS, shared_pairs

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

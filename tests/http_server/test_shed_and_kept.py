"""Whom a full table sheds: the oldest entry of the client holding the most."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http._fairness import oldest_of_heaviest


@given(st.lists(st.sampled_from("abc"), max_size=20))
def test_the_oldest_entry_of_the_heaviest_client_is_picked(clients: list[str]) -> None:
    entries = list(enumerate(clients))  # oldest first
    picked = oldest_of_heaviest(iter(entries), lambda entry: entry[1])
    if not entries:
        assert picked is None
        return
    assert picked is not None
    counts = Counter(clients)
    assert counts[picked[1]] == max(counts.values())
    # Nothing older belongs to a client holding as many.
    assert all(counts[client] < counts[picked[1]] for _, client in entries[: picked[0]])


def test_kept_parses_are_bounded_in_size_and_number() -> None:
    from trimcp.transports.http._guards import PARSED_KEPT, PARSED_MAX_LEN, kept

    seen: list[str] = []

    @kept
    def parse(value: str) -> int:
        seen.append(value)
        return len(value)

    assert parse("a") == parse("a") == 1
    assert seen == ["a"]  # the second came from what was kept
    long = "x" * (PARSED_MAX_LEN + 1)
    assert parse(long) == parse(long) == PARSED_MAX_LEN + 1
    assert seen.count(long) == 2  # never kept: a client cannot make the server hold it
    for n in range(PARSED_KEPT + 1):
        parse(str(n))
    parse("a")
    assert seen.count("a") == 2  # pushed out by newer values: at most PARSED_KEPT kept

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

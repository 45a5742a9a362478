"""Random caller scripts for the slot properties (pending table, connection slots)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio
from hypothesis import strategies as st

__all__ = ["Script", "callers", "in_arrival_order", "play"]

#: (start time, hold time, give up after or None), in whole seconds; callers differ in
#: start time by a hundredth so that arrival order is well defined.
Script = list[tuple[int, int, int | None]]

callers = st.lists(
    st.tuples(st.integers(0, 5), st.integers(1, 4), st.one_of(st.none(), st.integers(1, 6))),
    min_size=1,
    max_size=12,
)


def in_arrival_order(script: Script, got: list[int]) -> bool:
    """Whether the callers in ``got`` got their slots in the order they arrived."""
    arrivals = sorted(range(len(script)), key=lambda n: script[n][0] + n / 100)
    return got == [n for n in arrivals if n in got]


async def play(
    script: Script, caller: Callable[[int, int, int, int | None], Awaitable[None]]
) -> None:
    """Start ``caller(n, start, hold, give_up)`` for every line of ``script`` and wait
    for all of them (a lost slot leaves a caller waiting forever: the deadline ends it)."""
    with trio.fail_after(1000):
        async with trio.open_nursery() as nursery:
            for n, (start, hold, give_up) in enumerate(script):
                nursery.start_soon(caller, n, start, hold, give_up)

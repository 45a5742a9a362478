"""Property: an outbox's ``count`` is always the number of items it holds, whatever
mix of puts (within and past its bounds, whole or forced), takes, sheds and aborts
came before, and the budget gets every byte back once the outbox is dropped."""

from __future__ import annotations

import trio
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http._budget import ByteBudget
from trimcp.transports.http._sse_stream import Outbox

_STEPS = ["get", "take", "written", "shed", "abort", "close"]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 40)),
        st.tuples(st.just("whole"), st.integers(0, 40)),
        st.tuples(st.just("force"), st.integers(0, 40)),
        st.tuples(
            st.sampled_from(["get", "take", "written", "shed", "abort", "close"]), st.just(0)
        ),
    ),
    max_size=30,
)


def _held_items(outbox: Outbox) -> int:
    return len(outbox._items) if outbox._items is not None else 0


@given(ops, st.integers(1, 5), st.integers(1, 100), st.integers(0, 120))
def test_count_is_the_items_held(
    script: list[tuple[str, int]], max_events: int, max_bytes: int, budget_bytes: int
) -> None:
    budget = ByteBudget(budget_bytes)
    outbox = Outbox(max_events=max_events, max_bytes=max_bytes, budget=budget)

    async def get() -> None:
        with trio.move_on_after(0):  # an empty open outbox would wait
            await outbox.get()

    for op, size in script:
        if op == "put":
            outbox.put(b"x" * size)
        elif op == "whole":
            outbox.put(b"x" * size, whole=True)
        elif op == "force":
            outbox.put(b"x" * size, whole=True, force=True)
        elif op == "get":
            trio.run(get)
        elif op == "take":
            outbox.take_queued()
        elif op == "written":
            outbox.written()
        elif op == "shed":
            outbox.shed()
        elif op == "abort":
            outbox.abort()
        else:
            outbox.close()
        assert outbox.count == _held_items(outbox)
        assert len(outbox) == outbox.count
    outbox.abort()
    assert outbox.count == 0
    assert outbox.held == 0

"""Property: the pending table's slots are never lost, never exceeded, and passed on in order.

Random scripts start callers that take a slot (``allocate``), some of which give up
while they wait (cancelled) and some of which keep their call for a while before
releasing it; the table holds at most ``max_pending`` calls at once, callers that wait
get their slots in arrival order, a caller cancelled while it waited takes none, and
once everyone is done every slot is free again (a new caller gets one at once).
"""

from __future__ import annotations

import os

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis.strategies import integers

from trimcp.dispatch import PendingTable

from ._slot_scripts import Script, callers, in_arrival_order, play

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "40"))


async def _play(max_pending: int, script: Script) -> None:
    table = PendingTable(max_pending=max_pending)
    got: list[int] = []
    high = 0

    async def caller(n: int, start: int, hold: int, give_up: int | None) -> None:
        nonlocal high
        await trio.sleep(start + n / 100)
        with trio.move_on_after(give_up if give_up is not None else 1e9):
            call = await table.allocate("m")
            got.append(n)
            high = max(high, len(table))
            try:
                with trio.CancelScope(shield=True):
                    await trio.sleep(hold)
            finally:
                table.release(call)

    await play(script, caller)
    assert high <= max_pending
    # Whoever got a slot got it in arrival order among those who waited for one.
    assert in_arrival_order(script, got)
    assert len(table) == 0
    # Every slot is free again: max_pending callers get theirs without waiting.
    with trio.testing.assert_no_checkpoints():
        calls = [await table.allocate("again") for _ in range(max_pending)]
    assert len(table) == max_pending
    for call in calls:
        table.release(call)


@settings(max_examples=EXAMPLES, deadline=None)
@given(integers(1, 3), callers)
def test_slots_are_kept_and_passed_on_in_order(max_pending: int, script: Script) -> None:
    trio.run(_play, max_pending, script, clock=trio.testing.MockClock(autojump_threshold=0))

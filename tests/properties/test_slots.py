"""Property: slots (the HTTP client's connections, the pending table's calls, the
in-flight requests) are never lost, never exceeded, and passed on in order; a free
slot is taken without a scheduler round.

Random scripts start callers that take a slot, some of which give up while they wait
(cancelled) and some of which hold it for a while before giving it back; at most
``total`` callers hold one at once, waiting callers get theirs in arrival order, a caller
cancelled while it waited takes none, and once everyone is done every slot is free
again.
"""

from __future__ import annotations

import os

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis.strategies import integers

from trimcp.dispatch import Slots

from ._slot_scripts import Script, callers, in_arrival_order, play

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "40"))


async def _play(total: int, script: Script) -> None:
    slots = Slots(total)
    got: list[int] = []
    held = high = 0

    async def caller(n: int, start: int, hold: int, give_up: int | None) -> None:
        nonlocal held, high
        await trio.sleep(start + n / 100)
        with trio.move_on_after(give_up if give_up is not None else 1e9):
            if not slots.take_nowait():
                await slots.wait()
            got.append(n)
            held += 1
            high = max(high, held)
            try:
                with trio.CancelScope(shield=True):
                    await trio.sleep(hold)
            finally:
                held -= 1
                slots.release()

    await play(script, caller)
    assert high <= total
    assert in_arrival_order(script, got)
    assert slots.free == total
    assert not slots.waiting


@settings(max_examples=EXAMPLES, deadline=None)
@given(integers(1, 3), callers)
def test_slots_are_kept_and_passed_on_in_order(total: int, script: Script) -> None:
    trio.run(_play, total, script, clock=trio.testing.MockClock(autojump_threshold=0))


async def test_a_free_slot_is_taken_at_once_and_a_cancelled_wait_takes_none() -> None:
    slots = Slots(1)
    steps: list[object] = []

    class Steps(trio.abc.Instrument):
        def before_task_step(self, task: object) -> None:
            steps.append(task)

    trio.lowlevel.add_instrument(Steps())
    assert slots.take_nowait()  # no step of any task: this task never yielded
    assert steps == []
    assert slots.free == 0
    assert not slots.take_nowait()
    with trio.CancelScope() as scope:
        scope.cancel()
        with pytest.raises(trio.Cancelled):
            await slots.wait()
    assert not slots.waiting  # the cancelled waiter left
    slots.release()
    assert slots.free == 1

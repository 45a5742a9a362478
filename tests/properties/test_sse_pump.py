"""Property: an SSE response carries exactly its outbox's events, in order, and gives
every byte back to the output budget.

Random scripts queue events at random times (several at once, or one by one, some
within the eager rounds and some after the response started watching) and close the
outbox at some point; the pump may join what is queued into one body and end the
response with the last one. Whatever the timing: the bodies, joined, are the events in
order; exactly the last message ends the response; no body but a final one is empty;
and once the response is done the budget holds nothing. The same whether the response
waits its eager rounds polling or parked in an :class:`EagerLot` (which is empty after).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports.http._asgi_io import pump
from trimcp.transports.http._budget import ByteBudget
from trimcp.transports.http._eager import EagerLot
from trimcp.transports.http._sse_stream import Outbox

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "40"))

# Each step: scheduler rounds to let pass (0: at once), then how many events to queue.
steps = st.lists(st.tuples(st.integers(0, 8), st.integers(1, 3)), min_size=0, max_size=8)


async def _play(script: list[tuple[int, int]], rounds_before_close: int, eager: bool) -> None:
    lot = EagerLot()
    async with trio.open_nursery() as keeper:
        if eager:
            await keeper.start(lot.run)
        await _pump_script(script, rounds_before_close, lot)
        keeper.cancel_scope.cancel()
    assert len(lot) == 0


async def _pump_script(
    script: list[tuple[int, int]], rounds_before_close: int, lot: EagerLot
) -> None:
    budget = ByteBudget(1 << 20)
    outbox = Outbox(max_events=64, max_bytes=1 << 20, budget=budget)
    sent: list[MutableMapping[str, Any]] = []
    events: list[bytes] = []

    async def receive() -> MutableMapping[str, Any]:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)
        await trio.lowlevel.checkpoint()

    async def produce() -> None:
        for rounds, count in script:
            for _ in range(rounds):
                await trio.lowlevel.checkpoint()
            for _ in range(count):
                event = f"id: {len(events)}\ndata: {len(events)}\n\n".encode()
                events.append(event)
                assert outbox.put(event, str(len(events)))
        for _ in range(rounds_before_close):
            await trio.lowlevel.checkpoint()
        outbox.close()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce)
        assert await pump(outbox, receive, send, (), timeout=5, eager=lot) is True
    assert sent[0]["type"] == "http.response.start"
    bodies = sent[1:]
    assert b"".join(m["body"] for m in bodies) == b"".join(events)
    assert [m["more_body"] for m in bodies] == [True] * (len(bodies) - 1) + [False]
    assert all(m["body"] for m in bodies[:-1])
    assert budget.used == 0
    assert outbox.held == 0


@settings(max_examples=EXAMPLES, deadline=None)
@given(steps, st.integers(0, 8), st.booleans())
def test_a_stream_carries_its_events_in_order_and_gives_the_budget_back(
    script: list[tuple[int, int]], rounds_before_close: int, eager: bool
) -> None:
    clock = trio.testing.MockClock(autojump_threshold=0)
    trio.run(_play, script, rounds_before_close, eager, clock=clock)

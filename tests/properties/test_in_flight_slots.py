"""Property: a session's in-flight slots are never exceeded, never lost, and taken in order.

Random scripts send requests to a server session capped at ``max_in_flight`` handlers;
each handler holds its slot for a while, and the peer cancels some requests (before
they start, while they run, or after they answered). Whatever the timing: at most
``max_in_flight`` handlers run at once; handlers start in arrival order; a request
cancelled before it started never starts; exactly the requests whose handler returned
get an answer, one each; and once all is quiet every slot is free again (as many new
requests as the cap all start at once).
"""

from __future__ import annotations

import os
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.dispatch import Registry
from trimcp.nursery import HandlerContext, Role, SessionLimits, open_session
from trimcp.transports import memory_channel_pair
from trimcp.wire import Notification, Request, Response

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "40"))

# Per request: (arrival, hold, cancel after arrival or None), in whole seconds. Request n
# arrives n/100 s after its whole second, so arrival order is well defined.
scripts = st.lists(
    st.tuples(st.integers(0, 4), st.integers(1, 4), st.one_of(st.none(), st.integers(0, 6))),
    min_size=1,
    max_size=12,
)


async def _play(cap: int, script: list[tuple[int, int, int | None]]) -> None:
    running = 0
    high = 0
    started: list[int] = []
    returned: set[int] = set()
    cancel_sent: dict[int, float] = {}
    start_times: dict[int, float] = {}

    async def hold(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        nonlocal running, high
        request_id = ctx.request_id
        assert isinstance(request_id, int)
        started.append(request_id)
        start_times[request_id] = trio.current_time()
        running += 1
        high = max(high, running)
        try:
            await trio.sleep(params["hold"])
        finally:
            running -= 1
        returned.add(request_id)
        return {}

    registry = Registry()
    registry.add_request("hold", hold)
    end, channel = memory_channel_pair(max_buffer=64)
    limits = SessionLimits(max_in_flight=cap, max_queued=64)
    answers: list[int] = []

    async def peer_reads() -> None:
        while True:
            message = await end.receive()
            assert isinstance(message, Response), message
            assert isinstance(message.id, int)
            answers.append(message.id)

    async def one(n: int, arrive: int, hold_for: int, cancel: int | None) -> None:
        await trio.sleep(arrive + n / 100)
        await end.send(Request(id=n, method="hold", params={"hold": hold_for}))
        if cancel is not None:
            await trio.sleep(cancel + 0.005)
            cancel_sent[n] = trio.current_time()
            await end.send(Notification(method="notifications/cancelled", params={"requestId": n}))

    async with (
        open_session(channel, role=Role.SERVER, registry=registry, limits=limits) as session,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(peer_reads)
        async with trio.open_nursery() as peers:
            for n, (arrive, hold_for, cancel) in enumerate(script):
                peers.start_soon(one, n, arrive, hold_for, cancel)
        await trio.sleep(60)  # everything left runs out
        await trio.testing.wait_all_tasks_blocked()
        assert session.in_flight == session.queued == 0

        assert high <= cap
        arrival = {n: arrive + n / 100 for n, (arrive, _, _) in enumerate(script)}
        assert started == sorted(started, key=arrival.__getitem__), "started out of order"
        for n, when in cancel_sent.items():
            if n in start_times:
                assert start_times[n] <= when, f"{n} started after its cancellation"
        assert sorted(answers) == sorted(returned), "answers differ from the handlers that returned"
        assert len(answers) == len(set(answers))

        # No slot was lost: as many new requests as the cap all run at once.
        base = len(script)
        started.clear()
        for k in range(cap):
            await end.send(Request(id=base + k, method="hold", params={"hold": 5}))
        await trio.sleep(1)
        assert sorted(started) == list(range(base, base + cap))
        assert running == cap
        nursery.cancel_scope.cancel()


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(1, 3), scripts)
def test_in_flight_slots_are_bounded_ordered_and_never_lost(
    cap: int, script: list[tuple[int, int, int | None]]
) -> None:
    trio.run(_play, cap, script, clock=trio.testing.MockClock(autojump_threshold=0))

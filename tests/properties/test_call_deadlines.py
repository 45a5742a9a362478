"""Property: a call's deadline holds the same whichever way it is kept.

Random scripts start calls at random times with random timeouts; the peer answers each
after a random delay, or never. A session bounds its calls by its deadline timer when
its channel can withdraw queued sends, else by a cancel scope per call; both ways,
each call is answered if and only if its answer comes before its deadline, resolves at
that moment, and is followed by ``notifications/cancelled`` exactly when it timed out.
The buffer towards the peer holds one message, so sends also wait for room. Once the
callers are done, no answer is still alive: nothing the session keeps for deadlines
holds a call that ended.
"""

from __future__ import annotations

import os
import weakref

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import RequestTimeoutError
from trimcp.dispatch import Registry
from trimcp.nursery import Role, Session, open_session
from trimcp.wire import Notification, Request, Response

from ..core._support import raw_pair

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "40"))

# (start, timeout, answer delay or None); delays fall between whole seconds, deadlines on them.
calls = st.lists(
    st.tuples(
        st.integers(0, 6),
        st.integers(1, 8),
        st.one_of(st.none(), st.integers(0, 9).map(lambda n: n + 0.5)),
    ),
    min_size=1,
    max_size=12,
)


async def timed_call(
    session: Session, n: int, start: int, timeout: int, outcome: dict[int, tuple[str, float]]
) -> None:
    """Call ``call<n>`` at ``start`` with ``timeout``; note how and when it ended."""
    await trio.sleep(start)
    try:
        await session.request(f"call{n}", timeout=timeout)
    except RequestTimeoutError:
        outcome[n] = ("timed out", trio.current_time())
    else:
        outcome[n] = ("answered", trio.current_time())


class _Answer:
    """A value in an answer that can be watched for being freed."""


async def _play(script: list[tuple[int, int, float | None]], timed: bool) -> list[object]:
    peer, channel = raw_pair(max_buffer=1, timed=timed)
    outcome: dict[int, tuple[str, float]] = {}
    cancelled: set[int] = set()
    delays = {f"call{n}": delay for n, (_s, _t, delay) in enumerate(script)}
    ids: dict[object, int] = {}
    answers: list[weakref.ref[_Answer]] = []

    async with open_session(channel, role=Role.CLIENT, registry=Registry()) as session:
        assert session._timed_sends is timed

        async def answer(request: Request, delay: float) -> None:
            await trio.sleep(delay)
            value = _Answer()
            answers.append(weakref.ref(value))
            await peer.send(Response(id=request.id, result={"value": value}))

        async def serve(nursery: trio.Nursery) -> None:
            while True:
                message = await peer.receive()
                if isinstance(message, Notification):
                    cancelled.add(ids[message.params["requestId"]])  # type: ignore[index]
                    continue
                assert isinstance(message, Request)
                n = int(message.method.removeprefix("call"))
                ids[message.id] = n
                delay = delays[message.method]
                if delay is not None:
                    nursery.start_soon(answer, message, delay)

        async with trio.open_nursery() as peers:
            peers.start_soon(serve, peers)
            async with trio.open_nursery() as callers:
                for n, (start, timeout, _delay) in enumerate(script):
                    callers.start_soon(timed_call, session, n, start, timeout, outcome)
            await trio.testing.wait_all_tasks_blocked()
            # The session's reader holds the last message it read until the next one.
            await peer.send(Notification(method="notifications/unknown"))
            await trio.testing.wait_all_tasks_blocked()
            # Freed by reference counting as each call ended (or its answer came late).
            assert [ref() for ref in answers] == [None] * len(answers)
            peers.cancel_scope.cancel()
        assert session.pending == 0
    return [(outcome[n], n in cancelled) for n in range(len(script))]


def _model(script: list[tuple[int, int, float | None]]) -> list[object]:
    out: list[object] = []
    for start, timeout, delay in script:
        if delay is not None and delay < timeout:
            out.append((("answered", start + delay), False))
        else:
            out.append((("timed out", float(start + timeout)), True))
    return out


@settings(max_examples=EXAMPLES, deadline=None)
@given(calls)
def test_deadlines_hold_alike_with_the_timer_and_with_scopes(
    script: list[tuple[int, int, float | None]],
) -> None:
    expected = _model(script)
    for timed in (True, False):
        clock = trio.testing.MockClock(autojump_threshold=0)
        assert trio.run(_play, script, timed, clock=clock) == expected, timed

"""Property: an outbound request's timeout is the caller's, and progress restarts it.

For any caller ``timeout`` and any schedule of progress notifications, the request
fails exactly ``timeout`` seconds after the last sign of life (the request itself or a
progress notification), capped by ``max(timeout, max_request_timeout)`` in total, and
succeeds when every gap stays shorter than that. Virtual time: the clock jumps.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trimcp import RequestTimeoutError, SessionLimits
from trimcp.dispatch import Registry
from trimcp.nursery import Role
from trimcp.wire import Notification, Response

from ..core._support import raw_session

CAP = 600.0


@st.composite
def schedules(draw: st.DrawFn) -> tuple[float, list[float], float]:
    """``(timeout, gaps before each progress notification, gap before the answer)``.

    Gaps stay clear of the timeout itself (a tie is a race on any clock)."""
    timeout = draw(st.floats(1, 900), label="timeout")
    inside = st.floats(0, timeout * 0.9)
    gaps = draw(st.lists(inside, max_size=6), label="progress gaps")
    final = draw(inside | st.floats(timeout * 1.1, timeout * 2), label="answer gap")
    return timeout, gaps, final


def _clear_of_the_cap(timeout: float, gaps: list[float], final: float) -> bool:
    """No message lands on the hard cap itself (a tie there is a race too)."""
    cap = max(timeout, CAP)
    moments = [sum(gaps[: n + 1]) for n in range(len(gaps))] + [sum(gaps) + final]
    return all(abs(moment - cap) > 1e-3 for moment in moments)


def _expected(timeout: float, gaps: list[float], final: float) -> float | None:
    """When the request times out (``None``: it is answered)."""
    cap = max(timeout, CAP)
    last = 0.0
    for gap in [*gaps, final]:
        if gap >= timeout or last + gap >= cap:
            return min(last + timeout, cap)
        last += gap
    return None


async def _ignore(progress: float, total: float | None, message: str | None) -> None:
    pass


async def _answer_late(peer: Any, gaps: list[float], final: float) -> None:
    """Report progress after each of ``gaps``, then answer after ``final``."""
    request = await peer.receive()
    token = request.params["_meta"]["progressToken"]
    for n, gap in enumerate(gaps):
        await trio.sleep(gap)
        params = {"progressToken": token, "progress": n}
        await peer.send(Notification(method="notifications/progress", params=params))
    await trio.sleep(final)
    await peer.send(Response(id=request.id, result={}))


async def _run(timeout: float, gaps: list[float], final: float) -> tuple[bool, float]:
    limits = SessionLimits(max_request_timeout=CAP)
    async with raw_session(Registry(), role=Role.CLIENT, limits=limits) as (peer, session):
        start = trio.current_time()
        answered = True
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_answer_late, peer, gaps, final)
            try:
                await session.request("work", timeout=timeout, on_progress=_ignore)
            except RequestTimeoutError:
                answered = False
            elapsed = trio.current_time() - start
            nursery.cancel_scope.cancel()
        return answered, elapsed


@settings(max_examples=150, deadline=None, database=None)
@given(schedules())
def test_progress_restarts_the_callers_timeout(schedule: tuple[float, list[float], float]) -> None:
    timeout, gaps, final = schedule
    assume(_clear_of_the_cap(timeout, gaps, final))
    clock = trio.testing.MockClock(autojump_threshold=0)
    answered, elapsed = trio.run(_run, timeout, gaps, final, clock=clock)
    expected = _expected(timeout, gaps, final)
    if expected is None:
        assert answered
        assert elapsed == pytest.approx(sum(gaps) + final)
    else:
        assert not answered
        assert elapsed == pytest.approx(expected)

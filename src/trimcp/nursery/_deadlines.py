"""The deadlines of a session's outbound calls, kept by one timer task.

A call whose every wait the timer can break goes without a cancel scope of its own
(:meth:`~trimcp.nursery._outbound.OutboundRequests._request` says which do): its
deadline goes into this heap, and one task per session sleeps until the earliest. When
a deadline passes, the session expires that call (its ``on_expired``): a caller waiting
for the answer wakes with the timeout error at once, one still held up in the
transport's send has its message withdrawn there and the send raises it, and one whose
message was already being written meets it as soon as it starts to wait.

Why: a Trio cancel scope with a deadline around each call (its cancel status, the
deadline's registration and their unwinding: some seventy Python calls) was a fifth of
a client's CPU per call. Here a call costs a heap push and, once it ended, a mark.

Entries leave lazily, as in Trio's own deadline heap: a call that ended only leaves the
table of live calls; stale entries are dropped when they reach the top, and the heap is
rebuilt whenever it holds more stale entries than live ones, so it never grows beyond
twice the calls waiting (plus a constant). An entry is a deadline and the call's id, not
the call: a call that ended is freed at once, with its answer, instead of living on in a
stale entry (at 10,000 calls in flight those kept answers were a large part of what the
garbage collector walked). The timer task starts with the first call and ends with the
session's nursery.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from math import inf
from typing import Any, final

import trio

from trimcp.dispatch import PendingCall

__all__ = ["CallDeadlines"]

#: Stale entries tolerated beyond the live ones before the heap is rebuilt.
_SLACK = 64


@final
class CallDeadlines:
    """One session's deadline heap and its timer (see the module doc)."""

    __slots__ = ("_calls", "_heap", "_on_expired", "_spawn", "_started", "_timer", "_wakes")

    def __init__(
        self,
        spawn: Callable[[Callable[[], Any]], None],
        on_expired: Callable[[PendingCall], None],
    ) -> None:
        self._spawn = spawn
        self._on_expired = on_expired
        #: (deadline, call id): ids are never reused within a session.
        self._heap: list[tuple[float, int]] = []
        #: The calls watched now, by id.
        self._calls: dict[int, PendingCall] = {}
        self._started = False
        #: The timer's sleep, whose deadline is the earliest live one.
        self._timer: trio.CancelScope | None = None
        #: That sleep's deadline (kept here: ``CancelScope.deadline`` is a property,
        #: a Python call on every add).
        self._wakes = inf

    def add(self, call: PendingCall, deadline: float) -> bool:
        """Watch ``call`` (made by the current task) until ``deadline``; ``False`` if
        the timer cannot run (the session's nursery takes no more tasks)."""
        if not self._started:
            try:
                self._spawn(self._run)
            except RuntimeError:
                return False
            self._started = True
        call.deadline = deadline
        call.task = trio.lowlevel.current_task()
        calls = self._calls
        calls[call.id] = call
        heapq.heappush(self._heap, (deadline, call.id))
        if deadline < self._wakes and self._timer is not None:
            self._timer.deadline = self._wakes = deadline
        if len(self._heap) > 2 * len(calls) + _SLACK:
            self._prune()
        return True

    def remove(self, call: PendingCall) -> None:
        """``call`` ended (or expired): its entry is stale from now on."""
        if call.deadline != inf:
            call.deadline = inf
            call.task = None
            del self._calls[call.id]

    def _prune(self) -> None:
        calls = self._calls
        self._heap = [entry for entry in self._heap if entry[1] in calls]
        heapq.heapify(self._heap)

    def _next(self) -> float:
        """The earliest live deadline (stale entries on top are dropped)."""
        heap = self._heap
        calls = self._calls
        while heap:
            deadline, call_id = heap[0]
            if call_id in calls:
                return deadline
            heapq.heappop(heap)
        return inf

    async def _run(self) -> None:
        while True:
            self._wakes = self._next()
            with trio.CancelScope(deadline=self._wakes) as self._timer:
                await trio.sleep_forever()
            self._timer = None
            self._wakes = inf
            now = trio.current_time()
            heap = self._heap
            calls = self._calls
            while heap and heap[0][0] <= now:
                _deadline, call_id = heapq.heappop(heap)
                call = calls.get(call_id)
                if call is not None:
                    self._on_expired(call)  # it reads the call's task
                    self.remove(call)

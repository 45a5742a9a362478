"""Responses waiting a few scheduler rounds for their first item, parked.

A response whose answer is not there yet waits up to :data:`EAGER_ROUNDS` scheduler
rounds for it before it starts watching for the client leaving (which registers a read
with the OS and needs a cancel scope to end). Polling for those rounds resumed the
connection task's whole coroutine stack every round, three or four times per request.
Here the response parks instead: its outbox's waker resumes it once, when the answer
comes (or the outbox closes). The bound stays in rounds: one keeper task per app
counts scheduler rounds while any response is parked, and releases each one that has
waited :data:`EAGER_ROUNDS` of them, which then watches as before. The keeper's round
is shared by every response parked at the time, so a burst of requests costs one
task step per round instead of one per request.

The keeper runs in the session manager's nursery; while it does not run (not started
yet, or the app shutting down), :meth:`EagerLot.wait` reports that it did not park, and
the response polls for its rounds instead. When the keeper ends, every response still
parked is released at once. A cancelled response leaves the lot at once (its wait is a
checkpoint).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Final, Protocol

import outcome
import trio

__all__ = ["EAGER_ROUNDS", "EagerLot"]

#: Scheduler rounds a response waits for its first item before it starts watching for
#: the client leaving. A tool answering at once takes three or four (the session's
#: reader, the admission, the handler); a spare pair covers a middleware checkpoint.
EAGER_ROUNDS: Final = 6


class _Wakeable(Protocol):
    """What :meth:`EagerLot.wait` needs of an outbox (:class:`~._sse_stream.Outbox`)."""

    waker: Callable[[], None] | None
    json: bool
    closed: bool
    #: Items queued.
    count: int


class EagerLot:
    """Where responses wait for their first item for up to :data:`EAGER_ROUNDS`
    scheduler rounds (module doc)."""

    __slots__ = ("_keeper", "_order", "_parked", "_round", "running")

    def __init__(self) -> None:
        #: Parked tasks: the outbox each waits on, and the round it parked in.
        self._parked: dict[trio.lowlevel.Task, tuple[_Wakeable, int]] = {}
        #: (round parked, task) in parking order; entries of tasks gone are skipped.
        self._order: deque[tuple[int, trio.lowlevel.Task]] = deque()
        self._round = 0
        #: The keeper while it waits for a response to park.
        self._keeper: trio.lowlevel.Task | None = None
        #: Whether :meth:`run` runs: only then does :meth:`wait` park.
        self.running = False

    def __len__(self) -> int:
        return len(self._parked)

    async def wait(self, outbox: _Wakeable) -> bool:
        """Park until ``outbox`` holds what its response starts with (one item for a
        JSON answer, two for a stream: its first is often the priming event) or is
        closed, or until :data:`EAGER_ROUNDS` rounds pass (counted again after each
        item) or the keeper ends. ``False`` at once, without a checkpoint, when the
        keeper is not running (the caller polls instead)."""
        if not self.running:
            return False
        task = trio.lowlevel.current_task()
        abort = functools.partial(self._abort, task)
        while outbox.count < (1 if outbox.json else 2) and not outbox.closed:
            parked = self._round
            self._parked[task] = (outbox, parked)
            self._order.append((parked, task))
            outbox.waker = functools.partial(self._release, task, True)
            keeper = self._keeper
            if keeper is not None:
                self._keeper = None
                trio.lowlevel.reschedule(keeper)
            if not await trio.lowlevel.wait_task_rescheduled(abort):
                break  # the rounds are up, or the keeper ended
        return True

    def _release(self, task: trio.lowlevel.Task, woken: bool) -> None:
        """Resume ``task`` if it is still parked: ``woken`` by its outbox, or not."""
        entry = self._parked.pop(task, None)
        if entry is not None:
            entry[0].waker = None
            trio.lowlevel.reschedule(task, outcome.Value(woken))

    def _abort(self, task: trio.lowlevel.Task, _: object) -> trio.lowlevel.Abort:
        entry = self._parked.pop(task, None)
        if entry is not None:
            entry[0].waker = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _unpark_keeper(self, _: object) -> trio.lowlevel.Abort:
        self._keeper = None
        return trio.lowlevel.Abort.SUCCEEDED

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Count rounds while a response is parked, release those whose rounds are up;
        until cancelled (then every parked response is released)."""
        self.running = True
        task_status.started()
        order = self._order
        try:
            while True:
                if not self._parked:
                    order.clear()
                    self._keeper = trio.lowlevel.current_task()
                    await trio.lowlevel.wait_task_rescheduled(self._unpark_keeper)
                await trio.lowlevel.checkpoint()
                self._round += 1
                due = self._round - EAGER_ROUNDS
                parked = self._parked
                while order and order[0][0] <= due:
                    since, task = order.popleft()
                    entry = parked.get(task)
                    if entry is not None and entry[1] == since:  # not parked again since
                        self._release(task, False)
        finally:
            self.running = False
            self._keeper = None
            order.clear()
            for task in list(self._parked):
                self._release(task, False)

"""Tasks parked in arrival order, each with a value, woken first-come or all at once.

The memory pair's senders waiting for room and the write batcher's senders waiting for
their batch park here: a dict keeps the order and lets a cancelled task leave in O(1)
(its abort removes it), without a lot's or an event's machinery per wait.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Generic, TypeVar

import trio

__all__ = ["ParkedTasks"]

T = TypeVar("T")


class ParkedTasks(Generic[T]):
    """Parked tasks and their values (:attr:`waiters`, in arrival order)."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: dict[trio.lowlevel.Task, T] = {}

    def park(self, value: T) -> Awaitable[None]:
        """Join the queue now; the awaitable returned waits until woken (a cancelled
        wait leaves the queue). A plain function handing back Trio's wait, so a parked
        task holds no frame of this layer (at 10,000 calls in flight, nearly all of
        them wait here)."""
        task = trio.lowlevel.current_task()
        waiters = self.waiters
        waiters[task] = value

        def abort(_: object) -> trio.lowlevel.Abort:
            del waiters[task]
            return trio.lowlevel.Abort.SUCCEEDED

        return trio.lowlevel.wait_task_rescheduled(abort)  # noqa: ASYNC105 (awaited by the caller)

    def wake_first(self) -> None:
        """Wake the task parked longest, if any."""
        if self.waiters:
            task = next(iter(self.waiters))
            del self.waiters[task]
            trio.lowlevel.reschedule(task)

    def wake_all(self) -> None:
        for task in self.waiters:
            trio.lowlevel.reschedule(task)
        self.waiters.clear()

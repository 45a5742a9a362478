"""Server-side counters of the benchmark servers, readable over MCP.

Every benchmark server (trimcp, the SDK, the floor) keeps one :class:`Probe` and serves
its :meth:`~Probe.snapshot` as the text of the ``bench_stats`` tool, so the client can
tell, over any transport and across processes, how many calls are parked, when the
last handler observed its cancellation (``time.monotonic()``, which is one clock for
every process on the machine), the process's resident memory and its live task count.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Probe", "asyncio_tasks", "rss_bytes", "trio_tasks"]


def rss_bytes() -> int:
    """This process's resident set size now (Linux ``/proc``), else its peak."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def trio_tasks() -> int:
    """Live Trio tasks in this run, the root included."""
    import trio

    count = 0
    pending = [trio.lowlevel.current_root_task()]
    while pending:
        task = pending.pop()
        if task is None:
            continue
        count += 1
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return count


def asyncio_tasks() -> int:
    """Live asyncio tasks in this loop."""
    import asyncio

    return len(asyncio.all_tasks())


class Probe:
    """Counts parked handlers and their cancellations; see the module docstring."""

    def __init__(self, count_tasks: Callable[[], int]) -> None:
        self.count_tasks = count_tasks
        self.entered = 0
        self.active = 0
        self.cancelled = 0
        self.last_cancel = 0.0

    def enter(self) -> None:
        self.entered += 1
        self.active += 1

    def observed_cancel(self) -> None:
        self.cancelled += 1
        self.last_cancel = time.monotonic()

    def leave(self) -> None:
        self.active -= 1

    def snapshot(self, tasks: bool = True) -> dict[str, Any]:
        """The counters now. ``tasks=False`` leaves the live task count out (``None``):
        counting walks every task, which under a server holding thousands of them
        costs milliseconds, and a client polling for its parked calls' cancellations
        every few milliseconds would otherwise slow the very cancellations it times."""
        return {
            "pid": os.getpid(),
            "entered": self.entered,
            "active": self.active,
            "cancelled": self.cancelled,
            "last_cancel": self.last_cancel,
            "rss": rss_bytes(),
            "tasks": self.count_tasks() if tasks else None,
        }

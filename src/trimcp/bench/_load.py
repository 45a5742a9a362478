"""Closed-loop load: N callers, each issuing calls back to back.

The callers run continuously; after a warm-up the generator opens a fixed measurement
window and records the latency of every call that completes inside it. Counting
completions in a time window (rather than timing a fixed number of calls) measures the
steady state only: no ramp-up with fewer than N calls in flight, no drain at the end,
and every implementation gets the same wall-clock budget however fast it is. At high
concurrency a call can take longer than the window, so both phases are stretched until
every caller has completed a call (up to :data:`MAX_STRETCH` seconds): the warm-up, so
the window sees the steady state, and the window, so that it holds at least one call
per caller instead of one wave of answers or none.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

from ._core import Caller
from ._runtimes import Runtime

#: Longest either phase is stretched, in seconds.
MAX_STRETCH = 30.0
#: Seconds between two checks while stretching.
_POLL = 0.02


@dataclass
class _Window:
    measuring: bool = False
    stop: bool = False
    completed: int = 0


@dataclass(frozen=True)
class LoadResult:
    """Latencies (seconds, completion order) of the calls completed in the window.

    ``cpu`` is the process CPU time spent in the window: per call, it is far less
    sensitive than wall time to other load on a shared machine.
    """

    latencies: list[float]
    elapsed: float
    cpu: float

    @property
    def calls(self) -> int:
        return len(self.latencies)


async def closed_loop(
    runtime: Runtime,
    call: Caller,
    *,
    concurrency: int,
    warmup: float,
    duration: float,
    on_window: Callable[[bool], None] | None = None,
) -> LoadResult:
    """Run ``concurrency`` callers for ``warmup + duration`` seconds; measure the latter.

    ``on_window(True)`` / ``on_window(False)`` run as the window opens and closes (a
    profiler hooks in there, so it sees the steady state only).
    """
    window = _Window()
    latencies: list[float] = []
    record = latencies.append
    clock = time.perf_counter

    async def caller() -> None:
        while not window.stop:
            start = clock()
            await call()
            window.completed += 1
            if window.measuring:
                record(clock() - start)

    async def stretch(began: float, done: Callable[[], bool]) -> None:
        while not done() and clock() - began < MAX_STRETCH:
            await runtime.sleep(_POLL)

    gc.collect()
    async with runtime.open_group() as group:
        for _ in range(concurrency):
            group.start_soon(caller)
        started = clock()
        await runtime.sleep(warmup)
        await stretch(started, lambda: window.completed >= concurrency)
        if on_window is not None:
            on_window(True)
        window.measuring = True
        began, cpu_began = clock(), time.process_time()
        await runtime.sleep(duration)
        await stretch(began, lambda: len(latencies) >= concurrency)
        window.measuring = False
        elapsed, cpu = clock() - began, time.process_time() - cpu_began
        if on_window is not None:
            on_window(False)
        window.stop = True
    return LoadResult(latencies, elapsed, cpu)

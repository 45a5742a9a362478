"""``parked``: memory per in-flight request, cancellation latency, and leaks.

One run, in a fresh worker process (so its resident memory says something):

1. connect, warm up with echo calls, read the server's counters (``bench_stats``)
   and both processes' resident memory;
2. start ``N`` calls to the ``park`` tool and wait until the server counts ``N``
   handlers parked; read resident memory again. Growth / ``N`` is the memory per
   in-flight request (client and server; counted once when they share a process);
3. cancel the callers' task group (every MCP client then sends
   ``notifications/cancelled``) and wait until the server counts ``N`` observed
   cancellations; the latency is from the cancel to the last handler observing it
   (``time.monotonic()`` is one clock for every process on the machine). The polls
   of steps 2 and 3 leave the server's tasks uncounted: the walk would slow the
   server most where it holds the most tasks;
4. leak check: the server's live handler count must return to its value before, its
   task count to at most its value before (over HTTP, plus ``task_slack``: a server
   keeps a task per connection its client keeps alive, and the cancellations may
   have opened some), and an echo must still work.

A handler that never observes its cancellation (within ``timeout``) is reported, not
waited for: ``observed`` < ``parked``.
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from ._core import Driver, Implementation, Target, Workload
from ._probe import rss_bytes
from ._runtimes import Runtime

__all__ = ["run"]

#: Seconds between two reads of the server's counters while waiting. Each read is a
#: call the server answers while it parks or cancels, so the poll stays sparse: the
#: latency comes from the server's own timestamp, not from when a poll saw it.
POLL = 0.02


async def _until(
    runtime: Runtime, target: Target, ready: Any, timeout: float, *, tasks: bool = False
) -> tuple[dict[str, Any], bool]:
    """Poll the server's counters until ``ready(stats)`` or ``timeout`` seconds; the
    live task count (a walk of every task in the server) only if ``tasks``."""
    assert target.stats is not None
    deadline = time.monotonic() + timeout
    while True:
        stats = await target.stats(tasks)
        if ready(stats):
            return stats, True
        if time.monotonic() > deadline:
            return stats, False
        await runtime.sleep(POLL)


async def run(
    impl: Implementation, driver: Driver, workload: Workload, params: dict[str, Any]
) -> dict[str, Any]:
    """``params``: ``parked`` (N), ``timeout`` (seconds per wait), ``task_slack``."""
    n = int(params["parked"])
    slack = int(params.get("task_slack", 0))
    timeout = float(params.get("timeout", 30.0))
    runtime = impl.runtime
    async with driver.connect(workload) as target:
        if target.park is None or target.stats is None:
            return {"unsupported": "the target has no park and stats tools"}
        park = target.park
        for _ in range(50):
            await target.call()
        gc.collect()
        before = await target.stats(True)
        client_before = rss_bytes()
        entered = before["entered"]

        async def parker() -> None:
            await park()

        async with runtime.open_group() as group:
            for _ in range(n):
                group.start_soon(parker)
            parked, all_parked = await _until(
                runtime, target, lambda s: s["entered"] - entered >= n, timeout
            )
            client_parked = rss_bytes()
            began = time.monotonic()
            group.cancel_scope.cancel()
        client_done = time.monotonic() - began
        cancelled0 = before["cancelled"]
        after, all_observed = await _until(
            runtime, target, lambda s: s["cancelled"] - cancelled0 >= parked["active"], timeout
        )
        settled, clean = await _until(
            runtime,
            target,
            lambda s: s["active"] == before["active"] and s["tasks"] <= before["tasks"] + slack,
            min(timeout, 5.0),
            tasks=True,
        )
        await target.call()
    server_growth = parked["rss"] - before["rss"]
    shared = parked["pid"] == os.getpid()
    client_growth = 0 if shared else client_parked - client_before
    total = server_growth + client_growth
    observed = after["cancelled"] - cancelled0
    return {
        "parked": parked["active"] - before["active"],
        "all_parked": all_parked,
        "bytes_per_request": total / n,
        "server_bytes_per_request": server_growth / n,
        "client_bytes_per_request": client_growth / n,
        "same_process": shared,
        "observed": observed,
        "all_observed": all_observed,
        "cancel_s": after["last_cancel"] - began if all_observed else None,
        "client_cancel_return_s": client_done,
        "leak_free": clean,
        "active_after": settled["active"] - before["active"],
        "tasks_before": before["tasks"],
        "tasks_after": settled["tasks"],
    }

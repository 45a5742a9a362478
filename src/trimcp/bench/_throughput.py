"""``throughput``: calls/s and latency percentiles at a fixed number of calls in flight."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._core import Driver, Implementation, Workload
from ._load import closed_loop
from ._stats import percentile

__all__ = ["run"]


async def run(
    impl: Implementation, driver: Driver, workload: Workload, params: dict[str, Any]
) -> dict[str, Any]:
    """One run: connect, load with ``params["concurrency"]`` callers, summarise.

    ``params``: ``concurrency``, ``warmup`` and ``duration`` (seconds). A driver whose
    server runs in another process may offer ``peer_cpu() -> seconds | None``; the
    sample then also has that process's CPU time in the window (``server_cpu_*``).
    """
    peer_cpu: Callable[[], float | None] | None = getattr(driver, "peer_cpu", None)
    marks: list[float | None] = []

    def on_window(_opening: bool) -> None:
        if peer_cpu is not None:
            marks.append(peer_cpu())

    async with driver.connect(workload) as target:
        result = await closed_loop(
            impl.runtime,
            target.call,
            concurrency=int(params["concurrency"]),
            warmup=float(params["warmup"]),
            duration=float(params["duration"]),
            on_window=on_window,
        )
    ordered = sorted(result.latencies)
    extra: dict[str, Any] = {}
    if len(marks) == 2 and marks[0] is not None and marks[1] is not None:
        server_cpu = marks[1] - marks[0]
        extra["server_cpu_s"] = server_cpu
        extra["server_cpu_us_per_call"] = (
            1e6 * server_cpu / result.calls if result.calls else float("nan")
        )
    return {
        **extra,
        "calls": result.calls,
        "elapsed_s": result.elapsed,
        "calls_per_s": result.calls / result.elapsed if result.elapsed > 0 else 0.0,
        "cpu_s": result.cpu,
        "cpu_us_per_call": 1e6 * result.cpu / result.calls if result.calls else float("nan"),
        "latency_s": {
            "mean": sum(ordered) / len(ordered) if ordered else float("nan"),
            "p50": percentile(ordered, 50),
            "p90": percentile(ordered, 90),
            "p99": percentile(ordered, 99),
            "max": ordered[-1] if ordered else float("nan"),
        },
    }

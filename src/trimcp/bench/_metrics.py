"""Metrics: each ``async run(impl, driver, workload, params) -> dict`` (one sample).

A sample is JSON-serialisable; the runner repeats it and the report aggregates. A
sample ``{"unsupported": reason}`` says the target cannot measure it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from . import _fanout, _parked, _throughput
from ._core import Driver, Implementation, Workload

__all__ = ["METRICS", "Metric"]

Metric = Callable[[Implementation, Driver, Workload, dict[str, Any]], Awaitable[dict[str, Any]]]

METRICS: dict[str, Metric] = {
    "throughput": _throughput.run,
    "parked": _parked.run,
    "fanout": _fanout.run,
}

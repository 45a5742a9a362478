"""Metrics: each a module with ``async run(impl, driver, workload, params) -> dict``.

A metric returns one JSON-serialisable sample; the runner repeats it and aggregates.
"""

from __future__ import annotations

from benchmarks.metrics import throughput

METRICS = {"throughput": throughput.run}

__all__ = ["METRICS"]

"""Benchmarks comparing trimcp with the official MCP Python SDK and a raw floor.

Run ``python -m benchmarks --help``. Each implementation runs in its own subprocess
(:mod:`benchmarks.worker`), driven by :mod:`benchmarks.runner`, which interleaves runs
across implementations so that machine noise spreads evenly over them.

Extending:

* a new transport is a new driver in an implementation's ``DRIVERS`` mapping
  (:mod:`benchmarks.impls`);
* a new metric is a module in :mod:`benchmarks.metrics` exposing ``run(...)`` and
  registered in ``benchmarks.metrics.METRICS``; it receives the same driver.
"""

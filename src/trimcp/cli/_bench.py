"""``trimcp bench``: the benchmarks of :mod:`trimcp.bench` as a subcommand."""

from __future__ import annotations

import argparse
from typing import Any

from trimcp.bench import add_arguments, run

from ._progress import progress

__all__ = ["add_bench"]


def add_bench(commands: Any) -> None:
    """Register ``bench`` on the ``trimcp`` subparsers ``commands``."""
    bench: argparse.ArgumentParser = commands.add_parser(
        "bench",
        help="benchmark trimcp, the mcp SDK and a raw floor (or any MCP server)",
        description="Throughput and p50/p99 at 1..10000 calls in flight, memory per parked "
        "request, cancellation latency and sampling fan-out, per transport.",
    )
    add_arguments(bench)
    bench.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    """Benchmark with live progress on a terminal (rich), a line per case otherwise."""
    return run(args, progress("bench"))

"""Benchmarks a user can run: ``trimcp bench`` and ``python -m benchmarks``.

For each transport (memory, stdio, Streamable HTTP, WebSocket) it measures ``tools/call``
throughput and p50/p99 latency at 1 to 10 000 calls in flight, memory per parked
in-flight request, the time to cancel parked calls (with a leak check), and a
handler's fan-out of concurrent sampling calls: trimcp, the official MCP SDK (an
optional install) and a raw Trio floor side by side, or any MCP server given by
command or URL. Each implementation runs in a worker process of its own
(``_worker``), driven by ``_runner``; servers of the stdio, HTTP and WebSocket runs
get a process of their own too (``_serve``).

Extending: a transport is a driver in an implementation's ``drivers`` (see
``_core.Driver``); a metric is a module with ``run(impl, driver, workload, params)``
registered in ``_metrics.METRICS``.
"""

from ._cli import add_arguments as add_arguments
from ._cli import build_parser as build_parser
from ._cli import main as main
from ._cli import run as run
from ._core import Target as Target
from ._core import Workload as Workload
from ._load import closed_loop as closed_loop
from ._registry import REGISTRY as REGISTRY
from ._registry import load as load_implementation

__all__ = [
    "REGISTRY",
    "Target",
    "Workload",
    "add_arguments",
    "build_parser",
    "closed_loop",
    "load_implementation",
    "main",
    "run",
]

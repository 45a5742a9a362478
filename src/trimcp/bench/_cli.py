"""The command line shared by ``trimcp bench`` and ``python -m benchmarks``.

:func:`add_arguments` fills any parser (the ``bench`` subcommand's, or a standalone
one), :func:`run` takes the parsed namespace: progress lines on stderr while it runs,
the tables on stdout, and, when asked, the JSON file (settings, every sample, the
summary) and the PNG plot. The exit status is 1 if any run failed.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from . import _report, _runner
from ._core import Workload
from ._era import DEFAULT_ERA, ERAS
from ._gc import ENV as GC_ENV
from ._gc import MODES, apply_from_env
from ._registry import DEFAULT_BY_TRANSPORT, REGISTRY, TRANSPORTS
from ._runner import BASELINE_SUFFIX, Lines, Progress
from ._settings import DEFAULT_LEVELS, METRIC_ORDER, Settings

__all__ = ["add_arguments", "build_parser", "main", "run"]

QUICK = {"repeats": 1, "warmup": 0.2, "duration": 0.5, "parked": 100, "fanout": 20}


def _list(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split(",") if part)


def _levels(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in _list(text))


def _checked(names: tuple[str, ...], known: Sequence[str], what: str) -> tuple[str, ...]:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what} {unknown}; known: {', '.join(known)}")
    return names


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The benchmark options, on ``p``."""
    p.add_argument(
        "--transport",
        type=_list,
        default=("memory",),
        help=f"comma list of {', '.join(TRANSPORTS)} (default: memory)",
    )
    p.add_argument(
        "--era",
        type=_list,
        default=(DEFAULT_ERA,),
        help=f"comma list of protocol eras, {', '.join(ERAS)} (default: {DEFAULT_ERA})",
    )
    p.add_argument(
        "--impl",
        type=_list,
        default=None,
        help=f"comma list of {', '.join(REGISTRY)}"
        " (default per transport: the stacks and the floor it has)",
    )
    p.add_argument(
        "--metric",
        type=_list,
        default=METRIC_ORDER,
        help=f"comma list of {', '.join(METRIC_ORDER)} (default: all)",
    )
    p.add_argument(
        "--concurrency",
        type=_levels,
        default=None,
        help="calls in flight, comma list (default: 1,10,100,1000,10000; http to 1000)",
    )
    p.add_argument("--repeats", "-r", type=int, default=3, help="runs per figure (default: 3)")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    p.add_argument("--duration", type=float, default=2.0, help="seconds measured per run")
    p.add_argument("--parked", type=int, default=1000, help="calls parked (default: 1000)")
    p.add_argument("--fanout", type=int, default=100, help="sampling calls fanned out")
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds to wait for parking or cancellation before giving up",
    )
    p.add_argument("--payload-bytes", type=int, default=16, help="echoed text length")
    p.add_argument(
        "--server-max-in-flight",
        choices=("match", "default"),
        default="match",
        help="raise servers' inbound limits to the level (match) or keep defaults",
    )
    p.add_argument(
        "--server-command",
        nargs=argparse.REMAINDER,
        default=None,
        metavar="CMD",
        help="benchmark this stdio MCP server (implementation 'external'); "
        "takes the rest of the command line",
    )
    p.add_argument(
        "--url", default=None, help="benchmark this Streamable HTTP (or ws://) MCP endpoint"
    )
    p.add_argument("--tool", default="echo", help="the external target's tool (default: echo)")
    p.add_argument(
        "--arguments",
        type=json.loads,
        default=None,
        help='its arguments as JSON (default: {"text": <payload>})',
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 repeat, short windows, 100 parked, fan-out of 20",
    )
    p.add_argument(
        "--fleet",
        action="store_true",
        help="multi-process HTTP: 1 worker with the memory store and 1, 2, 4 workers "
        "with a Redis store, behind haproxy (needs redis-server, haproxy, trimcp[redis]); "
        "--concurrency, --repeats, --warmup, --duration and --quick apply",
    )
    p.add_argument(
        "--baseline",
        metavar="DIR",
        default=None,
        help="a source tree of another trimcp version (a checkout): implementations named "
        "NAME@base (e.g. --impl trimcp,trimcp@base,floor) run from it, side by side",
    )
    p.add_argument(
        "--gc",
        choices=MODES,
        default="tuned",
        help="the garbage collector of every process, floors included: tuned (default, "
        "trimcp.tune_gc, as trimcp serve runs) or default (CPython's settings)",
    )
    p.add_argument("--json", metavar="FILE", help="write settings, all samples and summary")
    p.add_argument("--plot", metavar="FILE.png", help="plot throughput and p99 (matplotlib)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="MCP benchmarks: throughput and latency, memory per parked request, "
        "cancellation and reverse-call fan-out; trimcp vs the mcp SDK vs a raw floor",
    )
    add_arguments(p)
    return p


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings a parsed command line asks for."""
    transports = _checked(args.transport, TRANSPORTS, "transport")
    external = bool(args.server_command) or bool(args.url)
    if external and "memory" in transports:
        web = "websocket" if (args.url or "").startswith(("ws:", "wss:")) else "http"
        transports = (("stdio",) if args.server_command else ()) + ((web,) if args.url else ())
    names: dict[str, tuple[str, ...]] = {}
    for transport in transports:
        chosen = args.impl or DEFAULT_BY_TRANSPORT[transport]
        if external and "external" not in chosen:
            chosen = ("external", *(args.impl or ()))
        known = (*REGISTRY, *(f"{n}{BASELINE_SUFFIX}" for n in REGISTRY if args.baseline))
        names[transport] = _checked(tuple(chosen), known, "implementation")
    levels = dict(DEFAULT_LEVELS)
    if args.concurrency:
        levels = {t: args.concurrency for t in TRANSPORTS}
    options: dict[str, Any] = {
        "repeats": args.repeats,
        "warmup": args.warmup,
        "duration": args.duration,
        "parked": args.parked,
        "fanout": args.fanout,
    }
    if args.quick:
        options.update(QUICK)
    workload = Workload(
        payload_bytes=args.payload_bytes,
        server_command=tuple(args.server_command or ()),
        url=args.url or "",
        tool=args.tool,
        arguments=args.arguments,
    )
    return Settings(
        transports=transports,
        implementations=names,
        metrics=_checked(args.metric, METRIC_ORDER, "metric"),
        eras=_checked(args.era, ERAS, "era"),
        levels=levels,
        timeout=args.timeout,
        server_max_in_flight=args.server_max_in_flight,
        workload=workload,
        baseline=args.baseline,
        gc=args.gc,
        **options,
    )


def run(args: argparse.Namespace, display: AbstractContextManager[Progress] | None = None) -> int:
    """Run what ``args`` asks for; print progress, tables and where files went.

    ``display`` shows the progress while measuring (by default a line per case on
    stderr); it is closed before the tables go to stdout, so a live display never
    interleaves with them.
    """
    if getattr(args, "fleet", False):
        return _run_fleet(args)
    settings = settings_of(args)
    with display or nullcontext(Lines()) as shown:
        results = _runner.run(settings, shown)
    progress = Lines().line
    data = results.to_json()
    print(_report.render(data))
    status = 1 if any("error" in s for s in results.samples) else 0
    if args.json:
        data["summary"] = _report.summary(data)
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1)
        progress(f"wrote {args.json}")
    if args.plot:
        try:
            from ._plot import plot

            plot(data, args.plot)
            progress(f"wrote {args.plot}")
        except ImportError as exc:
            progress(f"no plot: matplotlib is not installed ({exc}); pip install 'trimcp[bench]'")
            status = 1
        except ValueError as exc:
            progress(f"no plot: {exc}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m trimcp.bench``: plain progress lines (``trimcp bench`` adds a live display)."""
    return run(build_parser().parse_args(argv))


def _run_fleet(args: argparse.Namespace) -> int:
    """``--fleet``: the multi-process deployments of :mod:`._fleet`, side by side."""
    from ._fleet import LEVELS, render, run_fleet

    # The workers inherit the setting; the client runs in this process.
    os.environ[GC_ENV] = args.gc
    apply_from_env()
    quick = args.quick
    results = run_fleet(
        levels=tuple(args.concurrency or LEVELS),
        repeats=1 if quick else args.repeats,
        warmup=QUICK["warmup"] if quick else args.warmup,
        duration=QUICK["duration"] if quick else args.duration,
        payload_bytes=args.payload_bytes,
        progress=Lines().line,
    )
    print(render(results))
    if args.json:
        table = {
            tool: {name: {str(n): v for n, v in by.items()} for name, by in deployments.items()}
            for tool, deployments in results.items()
        }
        with open(args.json, "w") as fh:
            json.dump({"fleet": table}, fh, indent=1)
    return 0

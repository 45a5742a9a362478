"""Command line of ``python -m benchmarks``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks import impls, report, runner
from benchmarks.settings import Settings

#: Default levels per transport where they differ: over HTTP every caller of the lean
#: client holds a connection, and 1000 sockets say more about the OS than the stack.
DEFAULT_LEVELS = {"http": "1,10,100"}

QUICK = {"repeats": 1, "warmup": 0.2, "duration": 0.5}


def _levels(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part)


def _names(text: str) -> tuple[str, ...]:
    names = tuple(part for part in text.split(",") if part)
    unknown = [n for n in names if n not in impls.REGISTRY]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown implementation(s) {unknown}; known: {', '.join(impls.REGISTRY)}"
        )
    return names


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="tools/call throughput and latency: trimcp vs the MCP SDK vs a raw floor",
    )
    p.add_argument(
        "--impl",
        type=_names,
        default=None,
        help=f"comma list from: {', '.join(impls.REGISTRY)} (default: "
        f"{','.join(impls.DEFAULT)}; for http: {','.join(impls.DEFAULT_BY_TRANSPORT['http'])})",
    )
    p.add_argument("--transport", default="memory", help="memory or http (default: %(default)s)")
    p.add_argument(
        "--concurrency",
        type=_levels,
        default=None,
        help="comma list of calls in flight (default: 1,10,100,1000; for http: 1,10,100)",
    )
    p.add_argument("--repeats", "-r", type=int, default=5, help="runs per figure (default: 5)")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    p.add_argument("--duration", type=float, default=3.0, help="seconds measured per run")
    p.add_argument("--payload-bytes", type=int, default=16, help="echoed text length")
    p.add_argument(
        "--server-max-in-flight",
        choices=("match", "default"),
        default="match",
        help="raise servers' inbound limits to the level (match) or keep defaults",
    )
    p.add_argument(
        "--quick", action="store_true", help="smoke run: 1 repeat, 0.2 s warm-up, 0.5 s window"
    )
    p.add_argument("--json", metavar="FILE", help="write settings, all samples and summary")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    options: dict[str, Any] = {
        "repeats": args.repeats,
        "warmup": args.warmup,
        "duration": args.duration,
    }
    if args.quick:
        options = QUICK
    levels = args.concurrency or _levels(DEFAULT_LEVELS.get(args.transport, "1,10,100,1000"))
    names = args.impl or impls.DEFAULT_BY_TRANSPORT.get(args.transport, impls.DEFAULT)
    settings = Settings(
        implementations=names,
        concurrency=levels,
        payload_bytes=args.payload_bytes,
        server_max_in_flight=args.server_max_in_flight,
        transport=args.transport,
        **options,
    )
    per_run = settings.warmup + settings.duration
    runs = settings.repeats * len(settings.concurrency) * len(settings.implementations)
    print(f"up to {runs} runs of ~{per_run:.1f} s each (~{runs * per_run:.0f} s)", file=sys.stderr)
    results = runner.run(settings, lambda line: print(line, file=sys.stderr, flush=True))
    data = results.to_json()
    print(report.render(data))
    if args.json:
        data["summary"] = report.summary(data)
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1)
        print(f"\nwrote {args.json}", file=sys.stderr)
    return 1 if any("error" in s for s in results.samples) else 0

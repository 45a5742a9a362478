"""Profile one implementation's hot path: ``python -m benchmarks.hotpath``.

The load runs as in the benchmark; the profiler sees the measurement window only.
Output: the cost centres of :mod:`benchmarks.attribution`, from py-spy sampling the
process from outside (default, least skew), or pyinstrument in process (skews towards
call-heavy code); cProfile's top functions by own time for detail; or Trio task steps,
spawns and scheduler batches per call (``--profiler steps``). ``--out DIR`` keeps the
raw profiles (collapsed stacks, ``.pstats``, pyinstrument ``.html``/``.txt``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
from typing import Any

import trio

from benchmarks.attribution import centres, centres_from_collapsed
from trimcp.bench import REGISTRY, Workload, closed_loop, load_implementation


class _StepCounter(trio.abc.Instrument):
    """A Trio instrument counting task steps and spawns in the window (Trio only)."""

    def __init__(self) -> None:
        self.steps = self.spawned = self.batches = 0

    def before_task_step(self, _task: object) -> None:
        self.steps += 1

    def task_spawned(self, _task: object) -> None:
        self.spawned += 1

    def before_io_wait(self, _timeout: float) -> None:
        self.batches += 1

    def start(self) -> None:
        trio.lowlevel.add_instrument(self)

    def stop(self) -> None:
        trio.lowlevel.remove_instrument(self)


def _nothing() -> None:
    pass


def _profile(args: argparse.Namespace) -> tuple[Any, float]:
    impl = load_implementation(args.impl)
    driver = impl.drivers[args.transport]()
    workload = Workload(server_max_in_flight=max(100, args.concurrency), era=args.era)
    profiler: Any = None
    start = stop = _nothing
    if args.profiler == "cprofile":
        profiler = cProfile.Profile()
        start, stop = profiler.enable, profiler.disable
    elif args.profiler == "steps":
        profiler = _StepCounter()
        start, stop = profiler.start, profiler.stop
    elif args.profiler == "pyinstrument":
        from pyinstrument import Profiler

        profiler = Profiler(interval=args.interval, async_mode="disabled")
        start, stop = profiler.start, profiler.stop

    def on_window(opening: bool) -> None:
        (start if opening else stop)()

    async def main() -> float:
        async with driver.connect(workload) as target:
            result = await closed_loop(
                impl.runtime,
                target.call,
                concurrency=args.concurrency,
                warmup=args.warmup,
                duration=args.duration,
                on_window=on_window,
            )
        return result.calls / result.elapsed

    rate = impl.runtime.run(main)
    return profiler, rate


def _report_pyinstrument(profiler: Any, rate: float, args: argparse.Namespace) -> None:
    session = profiler.last_session
    root = session.root_frame(trim_stem=False)
    totals = centres(root)
    whole = sum(totals.values())
    per_call_us = 1e6 / rate
    print(
        f"{args.impl} x{args.concurrency}: {rate:.0f} calls/s under pyinstrument "
        f"({per_call_us:.1f} us/call), {session.sample_count} samples"
    )
    print(f"{'cost centre':<58} {'share':>6} {'us/call':>8}")
    for name, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        share = seconds / whole
        print(f"{name:<58} {share:6.1%} {share * per_call_us:8.2f}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        stem = os.path.join(args.out, f"{args.impl}-x{args.concurrency}")
        with open(stem + ".html", "w") as fh:
            fh.write(profiler.output_html())
        with open(stem + ".txt", "w") as fh:
            fh.write(profiler.output_text(unicode=False, show_all=False))


def _print_centres(totals: dict[str, float], per_call_us: float | None, unit: str) -> None:
    """One line per cost centre: share of all time (and us per call, if known)."""
    whole = sum(totals.values())
    print(f"{'cost centre':<58} {'share':>6} {unit:>8}")
    for name, amount in sorted(totals.items(), key=lambda kv: -kv[1]):
        share = amount / whole
        figure = share * per_call_us if per_call_us is not None else amount
        print(f"{name:<58} {share:6.1%} {figure:8.2f}")


def _py_spy(args: argparse.Namespace) -> int:
    """Run the load in a child and sample it from outside with py-spy, window only.

    py-spy costs the profiled process almost nothing (it reads its memory), so the
    shares are not skewed towards call-heavy code the way in-process profilers skew
    them. It attaches after the warm-up and detaches before the window closes.
    """
    import shutil
    import subprocess
    import tempfile
    import time

    spy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(spy):
        print("py-spy is not installed (pip install py-spy)", file=sys.stderr)
        return 2
    child_args = [
        sys.executable, "-m", "benchmarks.hotpath", "--profiler", "none",
        "--impl", args.impl, "--transport", args.transport,
        "--concurrency", str(args.concurrency), "--warmup", str(args.warmup),
        "--duration", str(args.duration), "--era", args.era,
    ]  # fmt: skip
    out_dir = args.out or tempfile.mkdtemp(prefix="trimcp-hotpath-")
    os.makedirs(out_dir, exist_ok=True)
    raw = os.path.join(out_dir, f"{args.impl}-x{args.concurrency}.raw")
    child = subprocess.Popen(child_args)
    try:
        time.sleep(args.warmup + 0.5)
        sample_for = max(1, int(args.duration - 1))
        subprocess.run(
            [spy, "record", "--pid", str(child.pid), "--duration", str(sample_for),
             "--rate", str(args.rate), "--format", "raw", "--output", raw],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        child.wait()
    with open(raw) as fh:
        _print_centres(centres_from_collapsed(fh), None, "samples")
    print(f"collapsed stacks: {raw}")
    return 0


def _report_cprofile(profiler: Any, rate: float, args: argparse.Namespace) -> None:
    print(f"{args.impl} x{args.concurrency}: {rate:.0f} calls/s under cProfile")
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        stats.dump_stats(os.path.join(args.out, f"{args.impl}-x{args.concurrency}.pstats"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.hotpath", description=__doc__)
    p.add_argument("--impl", default="trimcp", choices=list(REGISTRY))
    p.add_argument("--transport", default="memory")
    p.add_argument("--concurrency", type=int, default=100)
    p.add_argument("--era", default="handshake", choices=("handshake", "stateless"))
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--duration", type=float, default=5.0)
    p.add_argument(
        "--profiler",
        choices=("py-spy", "pyinstrument", "cprofile", "steps", "none"),
        default="py-spy",
        help="py-spy: sample from outside (least skew); steps: count Trio task steps, "
        "spawns and scheduler batches per call; none: just run",
    )
    p.add_argument("--rate", type=int, default=1000, help="py-spy samples per second")
    p.add_argument("--interval", type=float, default=0.001, help="pyinstrument sampling, s")
    p.add_argument("--top", type=int, default=40, help="cProfile rows")
    p.add_argument("--out", metavar="DIR", help="keep raw profiles here")
    p.add_argument(
        "--collapsed",
        metavar="FILE",
        help="only fold a py-spy raw (collapsed) profile into cost centres",
    )
    args = p.parse_args(argv)
    if args.collapsed:
        with open(args.collapsed) as fh:
            _print_centres(centres_from_collapsed(fh), None, "samples")
        return 0
    if args.profiler == "py-spy":
        return _py_spy(args)
    profiler, rate = _profile(args)
    if args.profiler == "none":
        print(f"{args.impl} x{args.concurrency}: {rate:.0f} calls/s")
    elif args.profiler == "steps":
        calls = rate * args.duration
        print(
            f"{args.impl} x{args.concurrency}: {rate:.0f} calls/s; per call: "
            f"{profiler.steps / calls:.2f} task steps, {profiler.spawned / calls:.2f} spawns, "
            f"{profiler.batches / calls:.3f} scheduler batches"
        )
    elif args.profiler == "cprofile":
        _report_cprofile(profiler, rate, args)
    else:
        _report_pyinstrument(profiler, rate, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

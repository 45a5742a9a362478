"""Drive one worker process per implementation and collect samples.

Runs are interleaved: per transport and metric, every repeat visits every level, and
at each level every implementation in turn (the order rotated each repeat), so slow
drifts in machine load fall on all implementations alike instead of on whichever ran
last. Only one worker measures at any moment; the others wait on their stdin. The
``parked`` metric reads resident memory, so each of its runs gets a fresh worker.
Each era (``--era``) is measured in turn with a transport's workers, and every sample
records it (``era``; the floor's also ``era_free``: it speaks no MCP, so it runs the
same in every era, as the common baseline).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from ._era import ERA_FREE
from ._gc import ENV as GC_ENV
from ._settings import Settings

__all__ = ["BASELINE_SUFFIX", "Lines", "Progress", "Results", "Worker", "lacking", "run"]

#: An implementation name ending in this runs from the ``--baseline`` source tree.
BASELINE_SUFFIX = "@base"


class Progress(Protocol):
    """Where a run reports: ``update`` says which case runs now and how many are done
    (for a live display), ``line`` prints a finished case's figures or a note."""

    def update(self, completed: int, current: str = "", *, total: int | None = None) -> None:
        """``completed`` of ``total`` cases are done; ``current`` is running."""

    def line(self, text: str, *, plain_only: bool = False) -> None:
        """Report ``text``, one line."""


class Lines:
    """:class:`Progress` as plain lines on stderr, one per finished case or note."""

    def update(self, completed: int, current: str = "", *, total: int | None = None) -> None:
        """Nothing: plain output is the lines alone."""

    def line(self, text: str, *, plain_only: bool = False) -> None:
        """Print ``text`` on stderr."""
        print(text, file=sys.stderr, flush=True)


def lacking(hello: dict[str, Any], transport: str) -> dict[str, Any]:
    """``hello`` of an implementation without ``transport``, marked unavailable with why
    (``no websocket transport: <the implementation's own reason, if it gives one>``)."""
    why = hello.get("absent", {}).get(transport)
    reason = f"no {transport} transport" + (f": {why}" if why else "")
    return {**hello, "available": False, "reason": reason}


@dataclass
class Worker:
    """A running ``_worker`` process for one implementation."""

    name: str
    process: subprocess.Popen[str] | None
    hello: dict[str, Any]

    @property
    def available(self) -> bool:
        return bool(self.hello.get("available"))

    @classmethod
    def start(
        cls, name: str, transport: str, baseline: str | None = None, gc: str = "tuned"
    ) -> Worker:
        """Start ``name``'s worker; a name ending in ``@base`` runs the implementation
        of that name from the source tree ``baseline`` (its ``src`` first on the path,
        for its servers too), so two versions of trimcp run side by side. ``gc``: the
        collector of the worker and its server children (:mod:`._gc`)."""
        base, at, _ = name.partition(BASELINE_SUFFIX)
        env = {**os.environ, GC_ENV: gc}
        if at:
            if not baseline:
                return cls(name, None, {"available": False, "reason": "needs --baseline DIR"})
            source = os.path.join(os.path.abspath(baseline), "src")
            path = os.environ.get("PYTHONPATH")
            env["PYTHONPATH"] = source + (os.pathsep + path if path else "")
        process = subprocess.Popen(
            [sys.executable, "-m", f"{__package__}._worker", base],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        hello: dict[str, Any] = (
            json.loads(line) if line else {"available": False, "reason": "worker died"}
        )
        if at and hello.get("available"):
            hello["name"] = name
            hello["description"] = f"{hello['description']} [baseline: {baseline}]"
        if hello.get("available") and transport not in hello.get("transports", ()):
            hello = lacking(hello, transport)
            assert process.stdin is not None
            process.stdin.close()
        if not hello.get("available"):
            with process:  # closes its pipes and waits
                pass
            return cls(name, None, hello)
        return cls(name, process, hello)

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.process is not None
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        stdin.write(json.dumps(command) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            return {"ok": False, "error": "worker died"}
        answer: dict[str, Any] = json.loads(line)
        return answer

    def measures(self, metric: str) -> bool:
        metrics = self.hello.get("metrics")
        return metrics is None or metric in metrics

    def stop(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            assert self.process.stdout is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)
            self.process.stdout.close()


@dataclass
class Results:
    """Everything one invocation measured, ready for the report and ``--json``."""

    settings: Settings
    #: transport -> implementation -> its worker's hello (versions, or why unavailable)
    implementations: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    finished: float = 0.0
    load_before: tuple[float, ...] = ()
    load_after: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_json(),
            "implementations": self.implementations,
            "samples": self.samples,
            "started": self.started,
            "finished": self.finished,
            "loadavg_before": self.load_before,
            "loadavg_after": self.load_after,
        }


def _rotated(items: Sequence[str], by: int) -> list[str]:
    if not items:
        return []
    k = by % len(items)
    return [*items[k:], *items[:k]]


class _Counter:
    def __init__(self, total: int, progress: Progress) -> None:
        self.total, self.done, self.progress = total, 0, progress
        progress.update(0, total=total)

    def starting(self, record: dict[str, Any]) -> None:
        self.progress.update(self.done, " ".join(_case(record).split()))

    def record(self, record: dict[str, Any]) -> None:
        self.done += 1
        self.progress.update(self.done)
        self.progress.line(_progress_line(self.done, self.total, record))


def run(settings: Settings, progress: Progress) -> Results:
    """Measure every implementation at every point of every metric and transport."""
    results = Results(settings, load_before=os.getloadavg())
    plan = []
    for transport in settings.transports:
        names = settings.implementations[transport]
        progress.update(0, f"{transport}: starting {', '.join(names)}")
        workers = [Worker.start(n, transport, settings.baseline, settings.gc) for n in names]
        results.implementations[transport] = {w.name: w.hello for w in workers}
        for worker in workers:
            if not worker.available:
                why = worker.hello.get("reason")
                progress.line(f"{transport} {worker.name}: UNAVAILABLE ({why})")
        plan.append((transport, [w for w in workers if w.available]))
    total = len(settings.eras) * sum(
        settings.repeats * len(settings.points(t, m)) * len([w for w in live if w.measures(m)])
        for t, live in plan
        for m in settings.metrics
    )
    counter = _Counter(total, progress)
    try:
        for transport, live in plan:
            for era in settings.eras:
                for metric in settings.metrics:
                    _measure(settings, (transport, era), metric, live, results, counter)
            for worker in live:
                worker.stop()
    finally:
        for _transport, live in plan:
            for worker in live:
                if worker.process is not None and worker.process.poll() is None:
                    worker.stop()
    results.finished = time.time()
    results.load_after = os.getloadavg()
    return results


def _measure(
    settings: Settings,
    where: tuple[str, str],
    metric: str,
    live: list[Worker],
    results: Results,
    counter: _Counter,
) -> None:
    transport, era = where
    by_name = {w.name: w for w in live if w.measures(metric)}
    for repeat in range(settings.repeats):
        for point in settings.points(transport, metric):
            for name in _rotated(list(by_name), repeat):
                case = {
                    "implementation": name,
                    "transport": transport,
                    "era": era,
                    **({"era_free": True} if name in ERA_FREE else {}),
                    "metric": metric,
                    "concurrency": point,
                    "repeat": repeat,
                }
                counter.starting(case)
                command = settings.command(transport, metric, point, era)
                if metric == "parked":  # a fresh process: its memory is the run's alone
                    fresh = Worker.start(name, transport, settings.baseline, settings.gc)
                    try:
                        answer = fresh.ask(command)
                    finally:
                        fresh.stop()
                else:
                    answer = by_name[name].ask(command)
                record = {
                    **case,
                    **({"sample": answer["sample"]} if answer.get("ok") else {}),
                    **({} if answer.get("ok") else {"error": answer.get("error")}),
                }
                results.samples.append(record)
                counter.record(record)


def _case(record: dict[str, Any]) -> str:
    return (
        f"{record['transport']:<6} {record['era']:<9} {record['metric']:<10} "
        f"r{record['repeat']} {record['implementation']:<16} x{record['concurrency']:<5}"
    )


def _progress_line(done: int, total: int, record: dict[str, Any]) -> str:
    head = f"[{done:>3}/{total}] {_case(record)}"
    if "error" in record:
        return f"{head} ERROR {record['error']}"
    sample = record["sample"]
    if "unsupported" in sample:
        return f"{head} n/a ({sample['unsupported']})"
    if record["metric"] == "parked":
        cancel = sample["cancel_s"]
        shown = "never (all not observed)" if cancel is None else f"{cancel * 1e3:.1f} ms"
        return (
            f"{head} {sample['bytes_per_request'] / 1024:7.1f} KiB/request  cancel {shown}  "
            f"observed {sample['observed']}/{sample['parked']}  "
            f"{'clean' if sample['leak_free'] else 'LEAK'}"
        )
    if record["metric"] == "fanout":
        return (
            f"{head} one {sample['one_s'] * 1e3:7.2f} ms  x{sample['n']} "
            f"{sample['fanout_s'] * 1e3:7.2f} ms  ratio {sample['ratio']:.1f}"
        )
    lat = sample["latency_s"]
    return (
        f"{head} {sample['calls_per_s']:>9.0f} calls/s  "
        f"p50 {lat['p50'] * 1e3:7.3f} ms  p99 {lat['p99'] * 1e3:7.3f} ms"
    )

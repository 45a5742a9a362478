"""Drive one worker process per implementation and collect samples.

Runs are interleaved: every repeat visits every concurrency level, and at each level
every implementation in turn (the order rotated each repeat), so slow drifts in machine
load fall on all implementations alike instead of on whichever ran last. Only one
worker measures at any moment; the others wait on their stdin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from benchmarks.settings import Settings


@dataclass
class Worker:
    """A running ``benchmarks.worker`` process for one implementation."""

    name: str
    process: subprocess.Popen[str] | None
    hello: dict[str, Any]

    @property
    def available(self) -> bool:
        return bool(self.hello.get("available"))

    @classmethod
    def start(cls, name: str, transport: str) -> Worker:
        process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker", name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        hello: dict[str, Any] = (
            json.loads(line) if line else {"available": False, "reason": "worker died"}
        )
        if hello.get("available") and transport not in hello.get("transports", ()):
            hello = {**hello, "available": False, "reason": f"no {transport} driver"}
            assert process.stdin is not None
            process.stdin.close()
        if not hello.get("available"):
            process.wait()
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

    def stop(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)


@dataclass
class Results:
    """Everything one invocation measured, ready for the report and ``--json``."""

    settings: Settings
    implementations: dict[str, dict[str, Any]] = field(default_factory=dict)
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


def run(settings: Settings, progress: Callable[[str], None]) -> Results:
    """Measure every implementation at every level, ``settings.repeats`` times."""
    results = Results(settings, load_before=os.getloadavg())
    workers = [Worker.start(name, settings.transport) for name in settings.implementations]
    for worker in workers:
        results.implementations[worker.name] = worker.hello
        if not worker.available:
            progress(f"{worker.name}: UNAVAILABLE ({worker.hello.get('reason')})")
    live = [w for w in workers if w.available]
    by_name = {w.name: w for w in live}
    total = settings.repeats * len(settings.concurrency) * len(live)
    done = 0
    try:
        for repeat in range(settings.repeats):
            for level in settings.concurrency:
                for name in _rotated([w.name for w in live], repeat):
                    done += 1
                    command = settings.command(level)
                    answer = by_name[name].ask(command)
                    record = {
                        "implementation": name,
                        "transport": settings.transport,
                        "metric": settings.metric,
                        "concurrency": level,
                        "repeat": repeat,
                        **({"sample": answer["sample"]} if answer.get("ok") else {}),
                        **({} if answer.get("ok") else {"error": answer.get("error")}),
                    }
                    results.samples.append(record)
                    progress(_progress_line(done, total, record))
    finally:
        for worker in live:
            worker.stop()
    results.finished = time.time()
    results.load_after = os.getloadavg()
    return results


def _progress_line(done: int, total: int, record: dict[str, Any]) -> str:
    head = (
        f"[{done:>3}/{total}] r{record['repeat']} "
        f"{record['implementation']:<11} x{record['concurrency']:<5}"
    )
    if "error" in record:
        return f"{head} ERROR {record['error']}"
    sample = record["sample"]
    lat = sample["latency_s"]
    return (
        f"{head} {sample['calls_per_s']:>9.0f} calls/s  "
        f"p50 {lat['p50'] * 1e3:7.3f} ms  p99 {lat['p99'] * 1e3:7.3f} ms"
    )

"""``trimcp bench --fleet``: trimcp processes behind haproxy, memory store against Redis.

Four deployments, side by side, each behind the same haproxy (round-robin, HTTP
keep-alive, no affinity): 1 worker with the in-memory store, and 1, 2 and 4 workers
sharing a Redis store (a ``redis-server`` started here, without persistence). Each
worker is the benchmark's trimcp HTTP server (:mod:`._serve`, ``h11`` engine) in a
process of its own; the client is the lean h11 client of the ``raw-trimcp`` figures
(:mod:`._h11`), one session, ``tools/call`` at each level of calls in flight (closed
loop, as the ``throughput`` metric) of two tools: ``echo``, answered with one JSON body
(nothing goes to the store on the way), and ``echo_sse``, which logs first, so its
answer is an SSE stream whose three events (priming, log, result) are each written to
the event store: in Redis, one script each.

Per deployment and level: calls/s, p50 and p99 latency (medians of the repeats), and
the CPU each part spent per call in the measured window (all workers together, Redis,
haproxy, the client), read from ``/proc``. The Redis overhead is the difference
between the memory and Redis columns at 1 worker. On a machine with few cores every
process shares them: what more workers buy there is bounded by the cores, so the
figures show the cost of sharing state, not how far it scales.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Final

from ._core import SSE_TOOL, TOOL_NAME, Workload
from ._h11 import connect_url
from ._load import closed_loop
from ._process import ServerProcess, http_server
from ._runtimes import trio_runtime

__all__ = ["DEPLOYMENTS", "LEVELS", "render", "run_fleet"]

#: (store, workers) of each deployment, in the order shown.
DEPLOYMENTS: Final = (("memory", 1), ("redis", 1), ("redis", 2), ("redis", 4))
#: Calls in flight measured by default.
LEVELS: Final = (1, 10, 100)

_HAPROXY: Final = """\
global
    maxconn 8192
defaults
    mode http
    option http-keep-alive
    timeout connect 2s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend fleet
backend fleet
    balance roundrobin
{servers}
"""


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (0 once it is gone)."""
    return ServerProcess("", pid).cpu() or 0.0


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SystemExit(f"trimcp bench --fleet needs {name} (Debian: apt-get install {name})")
    return path


def _wait_line(process: subprocess.Popen[bytes], marker: bytes) -> None:
    assert process.stdout is not None
    for line in iter(process.stdout.readline, b""):
        if marker in line:
            return
    raise RuntimeError(f"{process.args!r} stopped before it was ready")


@contextmanager
def _running(command: list[str], marker: bytes, workdir: Path) -> Iterator[int]:
    """Run ``command`` until the block ends; yield its pid once it printed ``marker``."""
    log = (workdir / f"{Path(command[0]).name}-{_free_port()}.log").open("wb")
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, cwd=workdir
    )
    try:
        if marker:
            _wait_line(process, marker)
        yield process.pid
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()


@contextmanager
def _deployment(
    store: str, workers: int, workload: Workload, redis_url: str, workdir: Path
) -> Iterator[tuple[str, list[int], int]]:
    """``workers`` benchmark servers behind haproxy; yield its URL, the workers' pids
    and haproxy's."""
    env = dict(os.environ)
    if store == "redis":
        env["TRIMCP_BENCH_STORE"] = f"{redis_url}?prefix=bench{_free_port()}:"
    with ExitStack() as stack:
        servers = [
            stack.enter_context(http_server("trimcp", workload, env=env)) for _ in range(workers)
        ]
        port = _free_port()
        lines = "\n".join(
            f"    server w{n} {s.url.split('//')[1].split('/')[0]}" for n, s in enumerate(servers)
        )
        config = workdir / f"haproxy-{port}.cfg"
        config.write_text(_HAPROXY.format(port=port, servers=lines))
        haproxy = stack.enter_context(
            _running([_program("haproxy"), "-db", "-f", str(config)], b"", workdir)
        )
        _await_port(port)
        yield f"http://127.0.0.1:{port}/mcp", [s.pid for s in servers], haproxy


def _await_port(port: int) -> None:
    import socket
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"haproxy did not listen on {port}")


def _measure(
    url: str,
    workload: Workload,
    level: int,
    warmup: float,
    duration: float,
    pids: dict[str, list[int]],
) -> dict[str, Any]:
    """One closed-loop run against ``url``; CPU per call of each part in its window."""
    runtime = trio_runtime()
    marks: list[dict[str, float]] = []

    def on_window(_opening: bool) -> None:
        marks.append({part: sum(_cpu(p) for p in ps) for part, ps in pids.items()})

    async def main() -> Any:
        async with connect_url(url, workload, ours=True) as target:
            return await closed_loop(
                runtime, target.call, concurrency=level, warmup=warmup, duration=duration,
                on_window=on_window,
            )  # fmt: skip

    result = runtime.run(main)
    ordered = sorted(result.latencies)
    calls = max(result.calls, 1)
    sample: dict[str, Any] = {
        "calls_per_s": result.calls / result.elapsed if result.elapsed > 0 else 0.0,
        "p50_ms": 1000 * ordered[len(ordered) // 2] if ordered else float("nan"),
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        if ordered
        else float("nan"),
        "client_cpu_us": 1e6 * result.cpu / calls,
    }
    for part in pids:
        sample[f"{part}_cpu_us"] = 1e6 * (marks[1][part] - marks[0][part]) / calls
    return sample


def run_fleet(
    *,
    deployments: tuple[tuple[str, int], ...] = DEPLOYMENTS,
    levels: tuple[int, ...] = LEVELS,
    repeats: int = 3,
    warmup: float = 1.0,
    duration: float = 2.0,
    payload_bytes: int = 16,
    progress: Any = print,
) -> dict[str, Any]:
    """Measure each of ``deployments`` (``(store, workers)``, :data:`DEPLOYMENTS` by
    default); the medians, by tool, deployment and level (module doc)."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="trimcp-fleet-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        redis_port = _free_port()
        redis = stack.enter_context(
            _running(
                [_program("redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", tmp],
                b"Ready to accept connections", workdir,
            )
        )  # fmt: skip
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        base = Workload(payload_bytes=payload_bytes)
        for store, workers in deployments:
            name = f"{store} x{workers}"
            with _deployment(store, workers, base, redis_url, workdir) as (url, pids, proxy):
                parts = {"workers": pids, "redis": [redis], "haproxy": [proxy]}
                for tool in (TOOL_NAME, SSE_TOOL):
                    workload = Workload(
                        payload_bytes=payload_bytes, tool=tool, arguments={"text": base.text}
                    )
                    for level in levels:
                        samples = []
                        for repeat in range(repeats):
                            progress(f"fleet {name}, {tool}: {level} in flight, run {repeat + 1}")
                            samples.append(_measure(url, workload, level, warmup, duration, parts))
                        by_level = results.setdefault(tool, {}).setdefault(name, {})
                        by_level[level] = {
                            key: statistics.median(s[key] for s in samples) for key in samples[0]
                        }
    return results


def render(results: dict[str, Any]) -> str:
    """The tables of :func:`run_fleet`'s results: per tool, one per figure."""
    figures = [
        ("calls/s", "calls_per_s", "{:.0f}"),
        ("p50 latency, ms", "p50_ms", "{:.2f}"),
        ("p99 latency, ms", "p99_ms", "{:.2f}"),
        ("workers' CPU per call, us (all workers)", "workers_cpu_us", "{:.0f}"),
        ("Redis CPU per call, us", "redis_cpu_us", "{:.0f}"),
        ("haproxy CPU per call, us", "haproxy_cpu_us", "{:.0f}"),
        ("client CPU per call, us", "client_cpu_us", "{:.0f}"),
    ]
    out = []
    for tool, by_name in results.items():
        names = list(by_name)
        levels = sorted({level for by_level in by_name.values() for level in by_level})
        for title, key, form in figures:
            out.append(f"fleet behind haproxy, {tool} / {title} (median of repeats)")
            out.append("in flight  " + "  ".join(f"{n:>12}" for n in names))
            for level in levels:
                cells = [
                    form.format(by_name[n][level][key]) if level in by_name[n] else "-"
                    for n in names
                ]
                out.append(f"{level:>9}  " + "  ".join(f"{c:>12}" for c in cells))
            out.append("")
    return "\n".join(out)

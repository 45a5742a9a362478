"""Start a benchmark server process (:mod:`._serve`) and stop it for sure.

The server runs in its own process so that the client under test (in the worker) and
the server do not share an event loop or a GIL, as with any real HTTP deployment. On a
machine with few cores they still share the CPUs: the figures are for the pair.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ._core import Workload

__all__ = ["PeerCpu", "ServerProcess", "http_server", "serve_command"]

#: Seconds a server may take to import, bind and start accepting.
START_TIMEOUT = 30.0
#: Seconds between closing the server's stdin, SIGTERM and SIGKILL.
STOP_GRACE = 2.0


@dataclass(frozen=True)
class ServerProcess:
    """A running server: where it listens, and how much CPU it has used so far."""

    url: str
    pid: int

    def cpu(self) -> float | None:
        """User + system CPU seconds of the server process (Linux ``/proc``), or None."""
        try:
            with open(f"/proc/{self.pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class PeerCpu:
    """Mixin for HTTP and WebSocket drivers: ``peer_cpu()`` reads the current server's CPU time.

    The throughput metric samples it as its window opens and closes, so server CPU
    per call is measured over the same window as the client's.
    """

    server: ServerProcess | None = None

    def peer_cpu(self) -> float | None:
        return self.server.cpu() if self.server is not None else None


def _read_port(process: subprocess.Popen[bytes]) -> int:
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = time.monotonic() + START_TIMEOUT
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"HTTP server gave no port within {START_TIMEOUT} s")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 64)
            if not chunk:
                raise RuntimeError(f"HTTP server exited ({process.wait()}) before binding")
            data += chunk
    return int(data.split(b"\n", 1)[0])


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None:
        process.stdin.close()
    for signal in (None, process.terminate, process.kill):
        if signal is not None:
            signal()
        try:
            process.wait(timeout=STOP_GRACE)
            break
        except subprocess.TimeoutExpired:
            continue
    if process.stdout is not None:
        process.stdout.close()


def serve_command(kind: str, transport: str, workload: Workload) -> list[str]:
    """The arguments after ``python`` that run a ``kind`` server over ``transport``."""
    return ["-m", "trimcp.bench._serve", kind, transport, json.dumps(workload.to_json())]


@contextmanager
def http_server(
    kind: str,
    workload: Workload,
    transport: str = "http",
    env: dict[str, str] | None = None,
) -> Iterator[ServerProcess]:
    """Run a ``kind`` server for ``workload``; yield it once it listens; stop it on exit.

    ``transport``: ``http`` (Streamable HTTP) or ``websocket`` (a ``ws://`` URL).
    ``env``: the server's environment (default: this process's).
    """
    process = subprocess.Popen(
        [sys.executable, *serve_command(kind, transport, workload)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        port = _read_port(process)
        scheme = "ws" if transport == "websocket" else "http"
        yield ServerProcess(f"{scheme}://127.0.0.1:{port}/mcp", process.pid)
    finally:
        _stop(process)

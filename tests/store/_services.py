"""Real services of the shared-store tests: a ``redis-server`` (and ``haproxy``) of the
Debian packages, started by the tests on a free 127.0.0.1 port and stopped by them.

Locally a test needing one is skipped when its program is missing; with
``TRIMCP_REQUIRE_SERVICES=1`` (``.ci/run`` sets it) it fails instead, so CI never
skips them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import IO, Final

import pytest

#: Bound on a service's start (reading its readiness line).
START_TIMEOUT: Final = 20.0


def require(program: str) -> str:
    """The path of ``program``; skip (or, under CI, fail) when it is not installed."""
    path = shutil.which(program)
    if path is not None:
        return path
    package = "redis-server" if program == "redis-server" else program
    reason = f"{program} not found (Debian: apt-get install {package})"
    if os.environ.get("TRIMCP_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{program} is required here: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    """A port free on 127.0.0.1 now (bound, read, released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _wait_for_line(stream: IO[bytes], marker: bytes, what: str) -> None:
    """Read ``stream`` until a line holds ``marker``; fail if it ends first."""
    for line in iter(stream.readline, b""):
        if marker in line:
            return
    raise RuntimeError(f"{what} stopped before it was ready")


class RedisServer:
    """One ``redis-server`` without persistence, in ``workdir``, on a fixed free port:
    :meth:`stop` and :meth:`start` again keep its URL (an outage and a recovery)."""

    def __init__(self, workdir: Path) -> None:
        self.program = require("redis-server")
        self.workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self.process is None
        self.process = subprocess.Popen(
            [
                self.program,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.workdir),
                "--loglevel", "notice",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert self.process.stdout is not None
        _wait_for_line(self.process.stdout, b"Ready to accept connections", "redis-server")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        self.process.wait(timeout=START_TIMEOUT)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

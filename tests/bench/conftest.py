"""A benchmark run on the command line, as the tests of its output use it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: ``run(*arguments)``: the JSON output and the standard output of one short run.
BenchRun = Callable[..., tuple[dict[str, Any], str]]


@pytest.fixture
def bench_run(tmp_path: Path) -> BenchRun:
    """``python -m trimcp.bench`` with ``arguments``, one repeat of short windows at 10
    in flight, its JSON written to a temporary file; fails with the run's stderr when it
    does not exit cleanly (within two minutes)."""

    def run(*arguments: str) -> tuple[dict[str, Any], str]:
        out = tmp_path / "bench.json"
        command = [
            sys.executable, "-m", "trimcp.bench", *arguments, "--concurrency", "10",
            "--repeats", "1", "--warmup", "0.05", "--duration", "0.2", "--json", str(out),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(out.read_text()), done.stdout

    return run

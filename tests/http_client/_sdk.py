"""Run an official-SDK server script as a subprocess on 127.0.0.1 for interop tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


def served(script: Path, *args: str) -> Iterator[str]:
    """Start ``script`` (which prints ``PORT <n>`` once listening); yield its /mcp URL,
    then stop it."""
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # ends when the server prints or dies
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

"""A server file served over Streamable HTTP by a ``trimcp serve`` child process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def served_over_http(server_file: Path) -> Iterator[str]:
    """``trimcp serve FILE --http 127.0.0.1:0`` for the block; its URL."""
    command = [sys.executable, "-m", "trimcp", "serve", str(server_file)]
    process = subprocess.Popen(
        [*command, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # blocks until the server prints its URL
        assert "http://127.0.0.1:" in line, line
        yield line.rsplit(" ", 1)[-1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()

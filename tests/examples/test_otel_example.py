"""The OpenTelemetry example prints the span tree of a sampling tool that is cancelled."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "otel", "trace_tree.py")


async def test_the_trace_tree_example() -> None:
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, EXAMPLE],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().splitlines() == [
        "tools/call research [CLIENT] cancelled (caller)",
        "└─ tools/call research [SERVER] cancelled (peer)",
        "   ├─ sampling/createMessage [CLIENT] ok",
        "   │  └─ sampling/createMessage [SERVER] ok",
        "   └─ sampling/createMessage [CLIENT] cancelled (caller)",
        "      └─ sampling/createMessage [SERVER] cancelled (peer)",
    ]

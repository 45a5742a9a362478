#!/usr/bin/env python3
"""Run one conformance client and record how it ended (for .ci/conformance_summary.py).

The harness runs `<this> RESULT_DIR TIMEOUT_S CLIENT_CMD... SERVER_URL` through a shell,
with MCP_CONFORMANCE_SCENARIO set. checks.json says nothing about the client's own exit,
so this writes RESULT_DIR/<scenario>.json = {scenario, exit_code, timed_out, seconds}.
The client is stopped (TERM, then KILL) after TIMEOUT_S, which should be below the
harness's --timeout so the record is written before the harness kills the shell.

Stdlib only, Python 3.11.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print("usage: conformance_client_wrap.py RESULT_DIR TIMEOUT_S CMD... URL", file=sys.stderr)
        return 2
    result_dir, limit, command = Path(argv[1]), float(argv[2]), argv[3:]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "unknown")
    started = time.monotonic()
    child = subprocess.Popen(command)

    def forward(signum: int, _frame: FrameType | None) -> None:
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    timed_out = False
    try:
        code = child.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        child.terminate()
        try:
            code = child.wait(timeout=3)
        except subprocess.TimeoutExpired:
            child.kill()
            code = child.wait()
    record = {
        "scenario": scenario,
        "exit_code": code,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 3),
    }
    result_dir.mkdir(parents=True, exist_ok=True)
    target = result_dir / (scenario.replace("/", "__") + ".json")
    target.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return 124 if timed_out else code


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Where the pinned Node peers of the interop tests live, and whether they may be skipped.

``tests/interop/node/package.json`` (with its lockfile) pins the TypeScript SDK, the
everything server, the MCP Apps SDK and its example app server; ``npm ci`` in that
folder installs them (``.ci/run`` does). Locally a test that needs them is skipped when
``node`` or the packages are missing; with
``TRIMCP_REQUIRE_NODE_PEERS=1`` (CI sets it) it fails instead, so CI never skips them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio

NODE_DIR = Path(__file__).parent / "node"
MODULES = NODE_DIR / "node_modules" / "@modelcontextprotocol"
EVERYTHING = MODULES / "server-everything" / "dist" / "index.js"
SDK = MODULES / "sdk" / "package.json"
SRC = Path(__file__).resolve().parents[2] / "src"


def require_node(*paths: Path) -> str:
    """The ``node`` to run, once ``paths`` exist; skip (or, under CI, fail) otherwise."""
    node = shutil.which("node")
    missing = [str(p.relative_to(NODE_DIR)) for p in paths if not p.exists()]
    if node is not None and not missing:
        return node
    reason = "node not found" if node is None else f"missing {', '.join(missing)}"
    reason += f" (run `npm ci` in {NODE_DIR})"
    if os.environ.get("TRIMCP_REQUIRE_NODE_PEERS") == "1":
        pytest.fail(f"the Node interop peers are required here: {reason}")
    pytest.skip(reason)


def node_env() -> dict[str, str]:
    """A small environment for a Node peer: no secrets of ours, nothing that opens a
    port (the peers speak stdio only)."""
    env = {
        key: os.environ[key] for key in ("PATH", "HOME", "LANG", "SYSTEMROOT") if key in os.environ
    }
    env["NODE_ENV"] = "test"
    return env


async def run_node_script(node: str, script: str, *args: str) -> dict[str, Any]:
    """Run ``tests/interop/node/<script>`` with ``args`` (trimcp's ``src`` importable by
    the Python children it starts); return the JSON object its last line prints."""
    env = node_env()
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    with trio.fail_after(60):
        done = await trio.run_process(
            [node, str(NODE_DIR / script), *args],
            cwd=NODE_DIR,
            env=env,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    seen: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "fatal" not in seen, seen["fatal"]
    return seen

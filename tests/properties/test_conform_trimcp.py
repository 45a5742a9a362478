"""The conformance machine against trimcp's own server, on every transport.

In memory (virtual clock), over stdio (``trimcp serve`` as a child process) and over
Streamable HTTP on 127.0.0.1. The budget is small by default so CI stays fast; set
``TRIMCP_CONFORM_EXAMPLES=<n>`` for a longer run. Every replay file in ``replays/`` (a
failure found once, in trimcp or in another server) is re-run against trimcp as a
regression test, in memory and over HTTP.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from trimcp.testing import (
    HttpTarget,
    MemoryTarget,
    StdioTarget,
    Target,
    load_replay,
    replay,
    run_conformance,
    sessions,
)

from ._http_child import served_over_http
from .conform_server import server

HERE = Path(__file__).parent
SERVER_FILE = HERE / "conform_server.py"
REPLAYS = sorted((HERE / "replays").glob("*.json"))  # failures seen, here or elsewhere
LONG = int(os.environ.get("TRIMCP_CONFORM_EXAMPLES", "0") or 0)
#: (examples, steps) per transport: stdio starts a process per session, so it gets fewer.
BUDGET = {"memory": (LONG or 25, 15), "stdio": (LONG or 2, 6), "http": (LONG or 8, 12)}
SERVE = [sys.executable, "-m", "trimcp", "serve", str(SERVER_FILE)]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """``trimcp serve --http 127.0.0.1:0`` for the module; its URL."""
    with served_over_http(SERVER_FILE) as url:
        yield url


def make_target(kind: str, url: str | None) -> Target:
    if kind == "memory":
        return MemoryTarget(server)
    if kind == "stdio":
        return StdioTarget(SERVE)
    assert url is not None
    return HttpTarget(url)


@settings(max_examples=LONG or 8, deadline=None, database=None)
@given(sessions(max_steps=8))
def test_drawn_sessions_replay_cleanly_in_memory(steps: list[dict[str, Any]]) -> None:
    assert replay(MemoryTarget(server), steps) is None


@pytest.mark.parametrize("kind", ["memory", "stdio", "http"])
def test_trimcp_server_conforms(kind: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url") if kind == "http" else None
    examples, steps = BUDGET[kind]
    report = run_conformance(make_target(kind, url), max_examples=examples, steps=steps)
    assert report.ok, [(f.property, f.detail, f.steps) for f in report.failures]
    assert report.examples >= examples


if REPLAYS:  # defined only when there is something to replay (never an empty skip)

    @pytest.mark.parametrize("kind", ["memory", "http"])
    @pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
    def test_replays_pass(path: Path, kind: str, request: pytest.FixtureRequest) -> None:
        url = request.getfixturevalue("http_url") if kind == "http" else None
        body = load_replay(path)
        assert replay(make_target(kind, url), body["steps"]) is None

"""The conformance machine's Streamable HTTP peer against slow servers: it resumes a
POST stream the server closes before the answer, and a POST whose response head is held
back (no output yet) counts as sent once written. On 127.0.0.1 only."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trimcp.testing import HttpTarget, Options, replay
from trimcp.testing._frames import Expect, Frame, dumps

from ._http_child import served_over_http

SERVE = [
    sys.executable,
    "-m",
    "trimcp",
    "serve",
    str(Path(__file__).parent / "slow_http_server.py"),
]
OPEN = {"op": "open", "version": "2025-11-25", "capabilities": {}, "answers": "result"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served_over_http(Path(__file__).parent / "slow_http_server.py") as served:
        yield served


def _call(tool: str, count: str = "one") -> tuple[dict[str, Any], int]:
    message = {"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": {"name": tool}}
    expect = Expect(count, (50,), method="tools/call")  # type: ignore[arg-type]
    return {"frame": Frame(dumps(message), "valid", expect).to_json(), "token": None}, 50


def test_a_stream_closed_before_its_answer_is_resumed(url: str) -> None:
    call, _ = _call("reconnecting")
    steps = [OPEN, {"op": "send", **call}]
    assert replay(HttpTarget(url), steps, Options(response_timeout=3)) is None


def test_a_call_with_no_response_head_yet_can_be_cancelled(url: str) -> None:
    call, request_id = _call("silent", count="at-most-one")
    steps = [OPEN, {"op": "call_cancel", **call, "id": request_id, "after": 0}]
    assert replay(HttpTarget(url), steps, Options(response_timeout=1)) is None

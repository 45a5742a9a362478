"""Every conformance check fires on a server that breaks it (mutation tests).

Each defect of :mod:`._broken` breaks one rule; a short, fixed list of actions replayed
against it must produce a violation of exactly the matching property, and the same
server without a defect must pass. Hypothesis itself must find and shrink a defect, and
the replay file it writes must reproduce it.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from trimcp.testing import Frame, Options, load_replay, replay, run_conformance, write_replay
from trimcp.testing._checker import Checker
from trimcp.testing._frames import Expect, dumps, expect_for
from trimcp.testing._inbox import Inbound
from trimcp.testing._machine import Recorder, machine_for

from ._broken import BrokenTarget

VERSION = "2025-06-18"
OPEN: dict[str, Any] = {"op": "open", "version": VERSION, "capabilities": {}, "answers": "result"}
CALL = {
    "jsonrpc": "2.0",
    "id": 101,
    "method": "tools/call",
    "params": {"name": "work", "arguments": {}, "_meta": {"progressToken": "tok"}},
}


def send(message: Any, token: str | None = None) -> dict[str, Any]:
    frame = Frame(dumps(message), "valid", expect_for(VERSION, message))
    return {"op": "send", "frame": frame.to_json(), "token": token}


def garbage() -> dict[str, Any]:
    frame = Frame(b"{", "not-json-rpc", Expect("one", (None,), (-32700,), must_error=True))
    return {"op": "send", "frame": frame.to_json(), "token": None}


def ping(n: int) -> dict[str, Any]:
    return send({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"})


CANCEL_AFTER_PROGRESS = {
    "op": "call_cancel",
    "frame": Frame(
        dumps(CALL), "valid", Expect("at-most-one", (101,), method="tools/call")
    ).to_json(),
    "token": "tok",
    "id": 101,
    "after": 1,
}

CASES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "cross-ids": ([OPEN, send(CALL, "tok")], "ids"),
    "double-response": ([OPEN, send(CALL, "tok")], "one-response"),
    "silent": ([OPEN, send(CALL, "tok")], "one-response"),
    "crash-on-bad-json": ([OPEN, garbage()], "session-survives"),
    "wrong-code": ([OPEN, send({"jsonrpc": "2.0", "id": 7, "method": "no/such"})], "error-codes"),
    "invalid-result": ([OPEN], "schema"),
    "early-notification": ([OPEN], "initialization"),
    "undeclared-logging": ([OPEN, send(CALL, "tok")], "capabilities"),
    "sampling-without-capability": ([OPEN, send(CALL, "tok")], "capabilities"),
    "endless-cursor": ([OPEN], "pagination"),
    "progress-decreases": ([OPEN, send(CALL, "tok")], "progress"),
    "ignores-cancel": ([OPEN, CANCEL_AFTER_PROGRESS, ping(1), ping(2)], "cancellation"),
    "no-exit": ([OPEN, {"op": "close"}], "disconnect"),
}


@pytest.mark.parametrize("defect", sorted(CASES))
def test_the_check_fires_on_the_defect(defect: str) -> None:
    steps, prop = CASES[defect]
    found = replay(BrokenTarget(defect), steps)
    assert found is not None, defect
    assert found.property == prop, found


@pytest.mark.parametrize("defect", sorted(CASES))
def test_the_same_steps_pass_without_the_defect(defect: str) -> None:
    assert replay(BrokenTarget(None), CASES[defect][0]) is None


def test_http_statuses_are_checked() -> None:
    checker = Checker(VERSION, {})
    request = Frame(
        dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}), "valid", Expect("one", (1,))
    )
    checker.sent(1, request, 0.0)
    with pytest.raises(AssertionError, match=r"\[http\] 202"):
        checker.receive(Inbound(b"", frame=1, status=202))
    with pytest.raises(AssertionError, match=r"\[http\] HTTP 500"):
        checker.receive(Inbound(b"boom", frame=1, status=500))
    # A refusal (4xx) of a frame that may be refused counts as its one answer.
    bad = Frame(b"{", "not-json-rpc", Expect("one", (None,), (-32700,), must_error=True))
    checker.sent(2, bad, 0.0)
    checker.receive(
        Inbound(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', 2, 400)
    )
    assert checker.pending[2].answers == 1
    with pytest.raises(AssertionError, match=r"\[one-response\]"):
        checker.receive(Inbound(b"", frame=2, status=400))


def test_hypothesis_finds_shrinks_and_replays_a_defect(tmp_path: Path) -> None:
    report = run_conformance(BrokenTarget("cross-ids"), max_examples=20, steps=6)
    found = {f.property: f for f in report.failures}
    assert "ids" in found, report.failures
    failure = found["ids"]
    # Shrunk: open, then one tool call (whose answer comes back under another id).
    assert [s["op"] for s in failure.steps] == ["open", "send"], failure.steps
    assert json.loads(failure.steps[1]["frame"]["text"])["method"] == "tools/call"
    path = write_replay(failure, tmp_path / "ids.json", report.target, Options())
    body = load_replay(path)
    assert body["property"] == "ids"
    again = replay(BrokenTarget("cross-ids"), body["steps"])
    assert again is not None
    assert again.property == "ids"
    assert replay(BrokenTarget(None), body["steps"]) is None


def test_a_conforming_server_passes_the_machine() -> None:
    report = run_conformance(BrokenTarget(None), max_examples=15, steps=12)
    assert report.ok, report.failures
    assert report.examples >= 15


def test_a_near_miss_that_is_run_may_report_progress() -> None:
    # A call with its id given twice is still a request a server may run (the last id
    # wins in Python's parser), and its progress names the token the frame carries.
    # The sender registers that token; a frame drawn with a token of its own once made
    # the machine fail a conforming server.
    text = dumps(CALL)[:-1] + b',"id":102}'
    frame = Frame(text, "duplicate-key", Expect("one", (101, 102, None)), "id given twice")
    steps = [OPEN, {"op": "send", "frame": frame.to_json(), "token": "tok"}, ping(1)]
    assert replay(BrokenTarget(None), steps) is None
    steps[1]["token"] = None  # not registered: the same progress is a violation
    violation = replay(BrokenTarget(None), steps)
    assert violation is not None
    assert violation.property == "progress"


def _loop_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "trimcp-conform")


def test_the_time_budget_ends_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    before = _loop_threads()
    report = run_conformance(BrokenTarget(None), max_examples=100_000, max_seconds=1, steps=3)
    assert report.ok
    assert 0 < report.examples < 100_000
    # An example refused for want of time started no Trio thread it would not stop.
    assert _loop_threads() <= before
    # The budget ending a step is no failure: Hypothesis prints no seed or steps for it.
    printed = capsys.readouterr()
    assert "@seed" not in printed.out + printed.err
    assert "Steps leading up" not in printed.out + printed.err


def test_once_time_is_up_an_example_only_closes() -> None:
    recorder = Recorder()
    machine = machine_for(BrokenTarget(None), Options(), recorder, (VERSION,))()
    machine.do(dict(OPEN))
    machine.do(ping(1))
    recorder.deadline = time.monotonic() - 1  # (each step may wait for its timeout)
    machine.do(ping(2))
    machine.do(dict(OPEN))
    machine.teardown()
    assert [step["op"] for step in machine.session.trace] == ["open", "send", "close"]


def test_an_ignored_property_is_not_reported() -> None:
    steps, prop = CASES["wrong-code"]
    assert replay(BrokenTarget("wrong-code"), steps, Options(ignore=(prop,))) is None
    steps, prop = CASES["silent"]  # an unanswered call is reported once, then let go
    steps = [*steps, ping(1), ping(2)]
    assert replay(BrokenTarget("silent"), steps, Options(ignore=(prop,))) is None


def test_a_request_that_breaks_a_rule_is_still_answered() -> None:
    # The broken server finishes the call only once its (forbidden) sampling request is
    # answered: with the capability check ignored, the peer must still answer it.
    steps, prop = CASES["sampling-without-capability"]
    options = Options(ignore=(prop,))
    assert replay(BrokenTarget("sampling-without-capability"), steps, options) is None


def test_a_server_request_that_broke_a_rule_may_still_be_cancelled() -> None:
    checker = Checker(VERSION, {})
    checker.initialized = True
    request = {"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage"}
    sampling = dumps({**request, "params": {"messages": [], "maxTokens": 5}})
    with pytest.raises(AssertionError, match=r"\[capabilities\]"):
        checker.receive(Inbound(sampling))
    cancel = {"method": "notifications/cancelled", "params": {"requestId": 1}}
    checker.receive(Inbound(dumps({"jsonrpc": "2.0", **cancel})))  # known: no violation
    cancel_other = {"method": "notifications/cancelled", "params": {"requestId": 2}}
    with pytest.raises(AssertionError, match=r"\[ids\]"):
        checker.receive(Inbound(dumps({"jsonrpc": "2.0", **cancel_other})))

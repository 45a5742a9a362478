"""``trimcp conform`` on slow but working servers: progress is a sign of life, a tool
may have its own timeout, and the machine's own sends never collide.

In memory on the virtual clock (``MemoryTarget``), so every wait here is free.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.cli import main
from trimcp.testing import MemoryTarget, Options, replay
from trimcp.testing._checker import Checker
from trimcp.testing._frames import Expect, Frame, dumps
from trimcp.testing._inbox import Inbound
from trimcp.testing._stream_targets import _MemoryConnection

OPEN = {"op": "open", "version": "2025-11-25", "capabilities": {}, "answers": "result"}


def _server() -> trimcp.Server:
    server = trimcp.Server("slow")

    @server.tool()
    async def steady(ctx: trimcp.ToolContext, steps: int) -> str:
        """Works 4 s per step, reporting progress after each step."""
        for step in range(1, steps + 1):
            await trio.sleep(4)
            await ctx.report_progress(step, steps)
        return "done"

    @server.tool()
    async def quiet(seconds: float) -> str:
        """Works ``seconds`` without a word."""
        await trio.sleep(seconds)
        return "done"

    return server


def _call(tool: str, arguments: dict[str, Any], request_id: int = 100) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": {"progressToken": "p"}},
    }
    expect = Expect("one", (request_id,), method="tools/call")
    frame = Frame(dumps(message), "valid", expect)
    return {"op": "send", "frame": frame.to_json(), "token": "p"}


def test_progress_keeps_a_slow_call_alive() -> None:
    # 20 s in all, never 5 s without a progress notification.
    steps = [OPEN, _call("steady", {"steps": 5})]
    assert replay(MemoryTarget(_server()), steps, Options(response_timeout=5)) is None


def test_silence_past_the_timeout_is_still_reported() -> None:
    found = replay(MemoryTarget(_server()), [OPEN, _call("quiet", {"seconds": 8})])
    assert found is not None
    assert found.property == "one-response"
    assert "no response within 5 s" in str(found)


def test_progress_is_capped_by_the_progress_limit() -> None:
    options = Options(response_timeout=5, progress_limit=10)
    found = replay(MemoryTarget(_server()), [OPEN, _call("steady", {"steps": 5})], options)
    assert found is not None
    assert "after its last progress notification" in str(found)


def test_a_tool_timeout_allows_one_tool_more_time() -> None:
    options = Options(response_timeout=5, tool_timeouts={"quiet": 10})
    steps = [OPEN, _call("quiet", {"seconds": 8})]
    assert replay(MemoryTarget(_server()), steps, options) is None
    assert options.timeout_for(Frame.from_json(steps[1]["frame"])) == 10


def test_the_checker_counts_silence_from_the_last_progress() -> None:
    checker = Checker("2025-11-25", {})
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
    frame = Frame(dumps(message), "valid", Expect("one", (1,), method="tools/call"))
    checker.sent(1, frame, 0.0, "tok", timeout=5)
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "tok", "progress": 1},
    }
    checker.initialized = True
    checker.receive(Inbound(json.dumps(progress).encode()), now=4.0)
    assert checker.next_deadline(cap=100) == 9.0
    checker.overdue(8.9, cap=100)  # still alive
    with pytest.raises(AssertionError, match="after its last progress notification"):
        checker.overdue(9.0, cap=100)


def test_a_request_outliving_a_session_the_peer_ended_may_get_404() -> None:
    checker = Checker("2025-11-25", {})
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}}
    frame = Frame(dumps(message), "valid", Expect("at-most-one", (7,), method="tools/call"))
    checker.sent(1, frame, 0.0)
    body = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"the session ended"}}'
    with pytest.raises(AssertionError, match="HTTP 404 for a valid request"):
        checker.receive(Inbound(body, 1, status=404))
    checker = Checker("2025-11-25", {})
    checker.sent(1, frame, 0.0)
    checker.ended = True
    checker.receive(Inbound(body, 1, status=404))
    assert checker.pending[1].answers == 1


async def test_sends_from_two_tasks_never_collide() -> None:
    """The session's main task and its drain (answering the server) may send at once."""
    ours, theirs = trio.testing.memory_stream_pair()
    connection = _MemoryConnection(ours)
    async with trio.open_nursery() as nursery:
        for n in range(3):
            nursery.start_soon(connection.send, dumps({"n": n}), n)
    assert connection.dead() is None
    received = b""
    while received.count(b"\n") < 3:
        received += await theirs.receive_some()
    assert sorted(json.loads(line)["n"] for line in received.splitlines()) == [0, 1, 2]


@pytest.mark.parametrize("value", ["slow", "slow=", "=3", "slow=-1", "slow=nan", "slow=x"])
def test_a_bad_tool_timeout_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conform", "--tool-timeout", value, "--", "x"]) == 2
    assert "NAME=SECONDS" in capsys.readouterr().err


def test_a_server_may_answer_what_it_read_before_its_session_ends() -> None:
    """Closing the client's side while a call runs: the server may finish and answer it
    within its grace (here 8 s) before the session ends; that is no disconnect failure."""
    server = _server()
    server.limits = trimcp.SessionLimits(eof_grace=8)
    message = {
        "jsonrpc": "2.0",
        "id": 100,
        "method": "tools/call",
        "params": {"name": "quiet", "arguments": {"seconds": 7}},
    }
    frame = Frame(dumps(message), "valid", Expect("at-most-one", (100,), method="tools/call"))
    steps = [OPEN, {"op": "send", "frame": frame.to_json(), "token": None}, {"op": "close"}]
    assert replay(MemoryTarget(server), steps) is None

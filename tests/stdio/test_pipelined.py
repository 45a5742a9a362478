"""A real ``trimcp serve`` child fed in one burst, the way ``printf ... | trimcp serve``
or a hurried client does: ``initialize`` is a barrier, and what was read before stdin
ended is answered before the process exits."""

from __future__ import annotations

import json
from typing import Any

import trio

from ._child import INITIALIZE as INIT
from ._child import raw_child, serve_argv

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "after the burst"}},
}


def _burst(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def _answers(lines: list[bytes]) -> dict[object, dict[str, Any]]:
    out = {}
    for line in lines:
        message = json.loads(line)
        if "id" in message and "method" not in message:
            out[message["id"]] = message
    return out


def _check(answers: dict[object, dict[str, Any]]) -> None:
    assert set(answers) == {0, 1, 2}, answers
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert "error" not in answers[1], answers[1]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= {"echo"}
    assert answers[2]["result"]["content"][0]["text"] == "after the burst"


async def test_a_pipelined_handshake_is_answered_in_full() -> None:
    """Several children, each given initialize, initialized, tools/list and a call in
    one write: every one answers all three requests (the race lost about 3 in 8)."""
    with trio.fail_after(30):
        for _ in range(4):
            async with raw_child(serve_argv()) as child:
                assert child.process.stdin is not None
                await child.process.stdin.send_all(_burst(INIT, INITIALIZED, LIST, CALL))
                lines = [await child.out.line() for _ in range(3)]
                assert all(line is not None for line in lines)
                _check(_answers([line for line in lines if line is not None]))
                await child.close_stdin()
                await child.process.wait()
                assert child.process.returncode == 0


async def test_a_burst_then_eof_is_answered_before_the_process_exits() -> None:
    """The burst followed at once by EOF on stdin: nothing already read is lost."""
    with trio.fail_after(20):
        async with raw_child(serve_argv()) as child:
            assert child.process.stdin is not None
            await child.process.stdin.send_all(_burst(INIT, INITIALIZED, LIST, CALL))
            await child.close_stdin()
            await child.process.wait()
            assert child.process.returncode == 0
            _check(_answers(await child.out.rest()))

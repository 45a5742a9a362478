"""Both eras in one stdio process: ``trimcp serve`` on the conformance fixture server.

A handshake-era client and stateless requests share the process's stdin/stdout; the
same tool body is a live reverse call for the one and an input round for the other.
A subscription is torn down by ``notifications/cancelled`` and nothing more is sent
for it. Every stateless-era message read is validated against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from ._support import ALL_CAPS, meta, validate_value

FIXTURE = Path(__file__).parent.parent.parent / "examples" / "conformance" / "server.py"
SUB = "io.modelcontextprotocol/subscriptionId"


class Child:
    """The server process, driven one JSON line at a time."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.buffer = b""
        self.kept: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(json.dumps(message).encode() + b"\n")

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        with trio.fail_after(20):
            while b"\n" not in self.buffer:
                data = await self.process.stdout.receive_some(65536)
                assert data, "the server closed stdout"
                self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        value: dict[str, Any] = json.loads(line)
        return value

    async def answer(self, id: Any) -> dict[str, Any]:
        """The response to ``id``; other messages are kept in :attr:`kept`."""
        while True:
            message = await self.read()
            if message.get("id") == id and "method" not in message:
                return message
            self.kept.append(message)


def _sub(message: dict[str, Any]) -> Any:
    return (message.get("params") or {}).get("_meta", {}).get(SUB)


def stateless(id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta()}}


async def test_one_stdio_process_serves_both_eras() -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trimcp", "serve", str(FIXTURE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    child = Child(process)
    try:
        # Stateless: an input round for the elicitation, then the retry.
        await child.send(
            stateless(1, "tools/call", {"name": "test_input_required_result_elicitation"})
        )
        first = await child.answer(1)
        validate_value(first, "tools/call")
        result = first["result"]
        assert list(result["inputRequests"]) == ["user_name"]
        retry = {
            "name": "test_input_required_result_elicitation",
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ann"}}},
            "requestState": result["requestState"],
        }
        await child.send(stateless(2, "tools/call", retry))
        second = await child.answer(2)
        validate_value(second, "tools/call")
        assert second["result"]["content"][0]["text"] == "Hello, Ann!"

        # Handshake era on the same process: the same body makes a live request.
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": ALL_CAPS,
            "clientInfo": {"name": "c", "version": "1"},
        }
        await child.send({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": init})
        assert (await child.answer(3))["result"]["protocolVersion"] == "2025-11-25"
        await child.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await child.send(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "test_input_required_result_elicitation"},
            }
        )
        asked = await child.read()
        assert asked["method"] == "elicitation/create"
        await child.send(
            {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"action": "accept", "content": {"name": "Bob"}},
            }
        )
        assert (await child.answer(4))["result"]["content"][0]["text"] == "Hello, Bob!"

        # A subscription, a change, then teardown by cancellation.
        await child.send(
            stateless("sub", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        )
        ack = await child.read()
        validate_value(ack, None)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        await child.send(stateless(5, "tools/call", {"name": "test_trigger_tool_change"}))
        await child.answer(5)
        tagged = [m for m in child.kept if _sub(m) == "sub"]
        while not tagged:  # the handshake-era session gets its own, untagged notice
            message = await child.read()
            tagged = [message] if _sub(message) == "sub" else []
        assert tagged[0]["method"] == "notifications/tools/list_changed"
        await child.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub"}}
        )
        child.kept.clear()
        await child.send(stateless(6, "tools/call", {"name": "test_trigger_tool_change"}))
        await child.answer(6)
        await child.send(stateless(7, "tools/list", {}))
        await child.answer(7)
        # Nothing for the cancelled subscription: no notification, no response.
        assert all(_sub(m) != "sub" for m in child.kept), child.kept
        assert all(m.get("id") != "sub" for m in child.kept)
        assert process.stdin is not None
        await process.stdin.aclose()
        with trio.fail_after(20):
            assert await process.wait() == 0
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
                await process.wait()

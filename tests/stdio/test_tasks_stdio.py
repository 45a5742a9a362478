"""A task over stdio, in a real ``trimcp serve`` process: it outlives its request, and
its completion arrives as ``notifications/tasks`` on a ``subscriptions/listen`` stream."""

from __future__ import annotations

import os
from typing import Any

import trio

from ._child import HERE, raw_child, serve_argv

CONFORMANCE_SERVER = os.path.join(HERE, "..", "..", "examples", "conformance", "server.py")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": META},
    }


async def test_a_task_runs_to_completion_over_stdio() -> None:
    with trio.fail_after(20):
        async with raw_child(serve_argv(CONFORMANCE_SERVER)) as child:
            await child.send(
                _request(1, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 1}})
            )
            created = (await child.response(1))["result"]
            assert created["resultType"] == "task"
            task_id = created["taskId"]
            await child.send(
                _request(2, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
            )
            ack = await child.message()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            update = await child.message()  # the next thing said: the task ended
            assert update["method"] == "notifications/tasks"
            assert update["params"]["taskId"] == task_id
            assert update["params"]["status"] == "completed"
            await child.send(_request(3, "tasks/get", {"taskId": task_id}))
            got = (await child.response(3))["result"]
            assert got["status"] == "completed"
            assert got["result"]["content"][0]["text"].startswith("Computed")
            await child.close_stdin()
            await child.process.wait()
            assert child.process.returncode == 0

"""The official TypeScript SDK client drives 2025-11-25 tasks on a trimcp stdio server.

``tests/interop/node/drive_task.mjs`` (run on the pinned ``@modelcontextprotocol/sdk``)
starts ``trimcp serve tests/interop/task_server.py`` as its child over stdio, calls a
tool as a task with the SDK's own ``callToolStream`` (which polls ``tasks/get`` and, on
``input_required``, calls ``tasks/result`` to receive the task's elicitation), lists,
fetches and cancels tasks, and prints what it saw as one JSON object.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ._node import SDK, require_node, run_node_script

SERVER = Path(__file__).parent / "task_server.py"


async def test_the_typescript_sdk_client_drives_a_trimcp_task() -> None:
    seen = await run_node_script(require_node(SDK), "drive_task.mjs", sys.executable, str(SERVER))
    assert seen["serverTasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert seen["taskSupport"] == {"plan": "required", "wait_forever": "optional"}
    task_id = seen["created"]["taskId"]
    assert seen["created"]["ttl"] == 60_000  # the TTL the SDK asked for
    # the task went input_required; the elicitation came on tasks/result, tagged
    assert "input_required" in seen["statuses"]
    assert seen["elicitations"] == [
        {"message": "Who owns 'ship'?", "relatedTask": {"taskId": task_id}}
    ]
    assert "error" not in seen, seen["error"]
    result = seen["result"]
    assert result["structuredContent"] == {
        "steps": ["understand ship", "do ship", "check ship"],
        "owner": "Ada",
    }
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    assert seen["final"]["status"] == "completed"
    assert seen["listed"] == [task_id]
    assert "notifications/tasks/status" in seen["notices"]
    assert seen["cancelled"]["status"] == "cancelled"
    assert seen["secondCancel"] == -32602  # a task already ended cannot be cancelled
    assert seen["plainRequired"] != "accepted"  # a required tool is never run plainly

"""trimcp's client against the official TypeScript "everything" server (stdio), on its
task tool: ``simulate-research-query`` requires task augmentation, asks for
clarification through ``input_required`` when the topic is ambiguous, and completes.

The server runs as a child process on stdio only (no port is opened); it is the pinned
``@modelcontextprotocol/server-everything`` of ``tests/interop/node``.
"""

from __future__ import annotations

from typing import Any

import trio

import trimcp
from trimcp.protocol import ElicitParams, ElicitResult, TextContent

from ._node import EVERYTHING, node_env, require_node

TOOL = "simulate-research-query"


def _everything() -> trimcp.transports.ClientTransport:
    node = require_node(EVERYTHING)
    return trimcp.stdio_command(node, str(EVERYTHING), "stdio", env=node_env())


async def test_simulate_research_query_completes_from_call_tool() -> None:
    asked: list[ElicitParams] = []

    async def clarify(_ctx: Any, params: ElicitParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"interpretation": "snake"})

    with trio.fail_after(60):
        async with trimcp.open_client(_everything(), elicitation=clarify) as client:
            assert client.protocol_version == "2025-11-25"
            assert trimcp.protocol.declares_tool_tasks(client.state.server_capabilities.tasks)
            # the caller does not say "task": the tool's taskSupport is "required"
            result = await client.call_tool(TOOL, {"topic": "python", "ambiguous": True})
            assert not result.is_error
            block = result.content[0]
            assert isinstance(block, TextContent)
            assert block.text.startswith("# Research Report: python (snake)")
            assert "Stage 4: Generating report" in block.text
            (question,) = asked  # the input_required round went through tasks/result
            assert "multiple interpretations" in question.message
            (task,) = await client.tasks.list_all()
            assert task.status == "completed"


async def test_a_research_task_is_followed_by_hand_and_cancelled() -> None:
    with trio.fail_after(60):
        async with trimcp.open_client(_everything(), era="handshake") as client:
            task = await client.tasks.call_tool(TOOL, {"topic": "trio"}, ttl=120)
            assert task.status == "working"
            assert task.ttl is not None  # the server chose it (it may override ours)
            state = await client.tasks.get(task.task_id)
            assert state.task_id == task.task_id
            cancelled = await client.tasks.cancel(task.task_id)
            assert cancelled.status == "cancelled"
            assert (await client.tasks.get(task.task_id)).status == "cancelled"

            done = await client.tasks.call_tool(TOOL, {"topic": "structured concurrency"})
            result = await client.tasks.wait(done)
            block = result.content[0]
            assert isinstance(block, TextContent)
            assert "Research Report: structured concurrency" in block.text

"""The trimcp server the official TypeScript SDK client drives tasks on (stdio).

``plan`` requires a task, asks for a name through elicitation while it runs (so the task
goes ``input_required``), reports its stages as status messages and answers structured
output; ``wait_forever`` may run as a task and only ends when cancelled.
"""

from __future__ import annotations

import attrs
import trio

import trimcp

server = trimcp.Server("trimcp-task-interop", version="1.0")


@attrs.frozen
class Who:
    name: str


@attrs.frozen
class Plan:
    steps: list[str]
    owner: str


@server.tool(task_support="required")
async def plan(ctx: trimcp.ToolContext, goal: str) -> Plan:
    """Plan ``goal`` in three steps, for a person it asks for."""
    await ctx.report_progress(1, 3, "reading the goal")
    answer, who = await ctx.elicit(f"Who owns '{goal}'?", Who)
    owner = who.name if who is not None else f"nobody ({answer.action})"
    await ctx.report_progress(2, 3, "planning")
    await trio.sleep(0.2)
    return Plan(steps=[f"understand {goal}", f"do {goal}", f"check {goal}"], owner=owner)


@server.tool(task_support="optional")
async def wait_forever(ctx: trimcp.ToolContext) -> str:
    """Waits until cancelled."""
    await trio.sleep_forever()
    return "never"

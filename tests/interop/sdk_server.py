"""An official-SDK (``mcp`` 2.x ``MCPServer``) stdio server for the trimcp client to drive.

``was_cancelled`` says whether a handler saw its cancellation, so the client can check
over the protocol that ``notifications/cancelled`` reached the SDK's handler.
"""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("sdk-interop", version="2.0", log_level="WARNING")

_cancelled: dict[str, anyio.Event] = {}


def _cancellation(label: str) -> anyio.Event:
    return _cancelled.setdefault(label, anyio.Event())


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report ``steps`` progress notifications."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.tool()
async def hang(label: str, ctx: Context) -> str:
    """Report progress once, then block until cancelled; remember the cancellation."""
    try:
        await ctx.report_progress(0, None, "started")
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        _cancellation(label).set()
        raise
    return "unreachable"


@server.tool()
async def was_cancelled(label: str, within: float = 5.0) -> bool:
    """Whether the call ``label`` is (or within ``within`` s becomes) cancelled."""
    with anyio.move_on_after(within):
        await _cancellation(label).wait()
    return _cancellation(label).is_set()


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Sampling: ask the client's model."""
    result = await ctx.request_context.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))],
        max_tokens=30,
        system_prompt="be brief",
        related_request_id=ctx.request_id,
    )
    content = result.content
    assert isinstance(content, types.TextContent)
    return f"{result.model}/{result.role}: {content.text}"


class Person(BaseModel):
    name: str
    age: int


@server.tool()
async def register(ctx: Context) -> str:
    """Elicitation: ask the user for a typed answer."""
    answer = await ctx.elicit("Who are you?", Person)
    if answer.action != "accept":
        return f"no answer ({answer.action})"
    return f"{answer.data.name} is {answer.data.age}"


@server.tool()
async def log_something(text: str, ctx: Context) -> str:
    """Send a log message to the client, then answer."""
    await ctx.log("warning", {"said": text}, logger_name="interop")
    return "logged"


class Nothing(BaseModel):
    pass


@server.tool()
async def ask_forever(ctx: Context) -> str:
    """Elicit, for an answer that never comes unless the client gives one."""
    try:
        answer = await ctx.elicit("Waiting...", Nothing)
    except anyio.get_cancelled_exc_class():
        _cancellation("ask_forever").set()
        raise
    return answer.action


if __name__ == "__main__":
    server.run("stdio")

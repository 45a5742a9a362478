"""A small server with the tools the HTTP tests drive."""

from __future__ import annotations

from typing import Any

import trio

import trimcp


def make_server() -> trimcp.Server:
    server = trimcp.Server("http-test", version="1.0")
    state: dict[str, Any] = {
        "slow_started": trio.Event(),
        "slow_done": trio.Event(),
        "release": trio.Event(),
    }
    server.test_state = state  # type: ignore[attr-defined]

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    async def chatty(ctx: trimcp.ToolContext, count: int = 3) -> str:
        """Report progress and log, then answer."""
        for i in range(count):
            await ctx.report_progress(i, count)
            await ctx.log("info", f"step {i}")
        return "done"

    @server.tool()
    async def ask(ctx: trimcp.ToolContext, prompt: str) -> str:
        """Ask the client's model."""
        result = await ctx.sample(prompt, max_tokens=10)
        content = result.content
        return f"model said: {getattr(content, 'text', '?')}"

    @server.tool()
    async def form(ctx: trimcp.ToolContext) -> str:
        """Ask the user."""
        result, content = await ctx.elicit(
            "name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"{result.action}: {content}"

    @server.tool()
    async def wait_release(ctx: trimcp.ToolContext) -> str:
        """Wait until the test releases it."""
        state["slow_started"].set()
        try:
            await state["release"].wait()
            return "released"
        finally:
            state["slow_done"].set()

    @server.tool()
    async def poll(ctx: trimcp.ToolContext) -> str:
        """Close the SSE stream, then finish after the test releases it."""
        await ctx.log("info", "before close")
        closed = await trimcp.close_sse_stream(ctx, retry_ms=50)
        await state["release"].wait()
        await ctx.log("info", "after close")
        return f"closed={closed}"

    @server.tool()
    async def flood(ctx: trimcp.ToolContext, count: int) -> str:
        """Send many log notifications."""
        for i in range(count):
            await ctx.log("info", "x" * 100 + str(i))
        return "flooded"

    return server

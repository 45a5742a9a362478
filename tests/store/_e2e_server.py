"""The server every process of the end-to-end fleet serves (``trimcp serve`` loads it).

Its tools say which process ran them (the pid), so a test can tell where each
request went."""

from __future__ import annotations

import os

import trio

import trimcp

server = trimcp.Server("fleet", version="1.0")


@server.tool()
async def where() -> str:
    """The pid of the process that ran the call."""
    return str(os.getpid())


@server.tool()
async def form(ctx: trimcp.ToolContext) -> str:
    """Ask the user (a reverse call), then say which process asked."""
    result, content = await ctx.elicit(
        "name?", {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return f"{os.getpid()} got {result.action}: {content}"


@server.tool()
async def poll(ctx: trimcp.ToolContext) -> str:
    """Close the SSE stream (the client resumes it, anywhere), then finish."""
    await ctx.log("info", "before close")
    await trimcp.close_sse_stream(ctx, retry_ms=100)
    await trio.sleep(0.5)
    await ctx.log("info", "after close")
    return f"finished on {os.getpid()}"


@server.tool(task_support="optional")
async def slow_task() -> str:
    """A task that takes a moment."""
    await trio.sleep(0.5)
    return f"task done on {os.getpid()}"


@server.tool()
async def hold(ctx: trimcp.ToolContext) -> str:
    """Say which process runs it, then run for a minute (to be killed)."""
    await ctx.log("info", str(os.getpid()))
    await trio.sleep(60)
    return "held"

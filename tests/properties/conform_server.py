"""The trimcp server the conformance machine runs against on every transport.

``python -m trimcp serve tests/properties/conform_server.py`` serves it on stdio (add
``--http 127.0.0.1:0`` for Streamable HTTP). It exposes something behind every
capability the machine exercises: tools with typed arguments, progress, a slow tool to
cancel, reverse calls, logging, resources and a template, prompts, and enough of each to
need more than one page.
"""

from __future__ import annotations

import trio

import trimcp

server = trimcp.Server("conform-fixture", version="1.0")


@server.tool()
async def echo(text: str) -> str:
    """Return ``text``."""
    return text


@server.tool()
async def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(ctx: trimcp.ToolContext, steps: int = 3) -> int:
    """Report up to 5 progress notifications, then return how many."""
    steps = max(0, min(steps, 5))
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return steps


@server.tool()
async def slow(ctx: trimcp.ToolContext) -> str:
    """Report progress every 10 ms, 20 times (long enough to be cancelled)."""
    for step in range(1, 21):
        await ctx.report_progress(step, 20)
        await trio.sleep(0.01)
    return "done"


@server.tool()
async def shout(ctx: trimcp.ToolContext, text: str = "hi") -> str:
    """Log ``text`` to the client at warning level, then return it."""
    await ctx.log("warning", {"text": text})
    return text.upper()


@server.tool()
async def ask(ctx: trimcp.ToolContext) -> str:
    """Ask the client's model (sampling); fails as a tool error when it cannot."""
    try:
        result = await ctx.sample("say something", max_tokens=5)
    except Exception as exc:
        raise trimcp.ToolError(f"sampling failed: {type(exc).__name__}") from exc
    return str(result.model)


def _item(index: int) -> None:
    @server.resource(f"test://item/{index}", name=f"item-{index}", mime_type="text/plain")
    async def item() -> str:
        return f"item {index}"


for _index in range(12):
    _item(_index)


@server.resource_template("test://note/{name}", name="note", mime_type="text/plain")
async def note(name: str) -> str:
    return f"note {name}"


@server.prompt(description="Greet someone.")
async def greet(name: str) -> str:
    return f"Hello, {name}"

"""A small trimcp server: serve it with ``trimcp serve examples/demo/server.py``.

Four tools show the engine's shape:

* ``add``: a plain typed tool.
* ``count``: slow work that reports progress to the caller.
* ``watch``: runs until it is cancelled; it notices, and tells the client through a
  log message sent from its cancelled scope.
* ``summarize`` / ``confirm``: tools that ask the client back, through sampling
  (the client's LLM) and elicitation (the client's user).
"""

from __future__ import annotations

import attrs
import trio

import trimcp

server = trimcp.Server(
    "demo",
    version="1.0",
    instructions="A demonstration server: arithmetic, progress, cancellation, reverse calls.",
)


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(ctx: trimcp.ToolContext, steps: int = 5, delay: float = 0.05) -> str:
    """Count to ``steps``, reporting progress after each step."""
    for step in range(1, steps + 1):
        await trio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted to {steps}"


@server.tool()
async def watch(ctx: trimcp.ToolContext, interval: float = 0.05) -> str:
    """Tick until cancelled; report each tick as progress."""
    ticks = 0
    try:
        while True:
            ticks += 1
            await ctx.report_progress(ticks, message=f"tick {ticks}")
            await trio.sleep(interval)
    except trio.Cancelled:
        # The request's scope was cancelled (notifications/cancelled from the client).
        # A shielded, time-bounded send still reaches the client before the scope exits.
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await ctx.log("info", f"watch was cancelled after {ticks} ticks", logger="demo")
        raise


@server.tool()
async def summarize(ctx: trimcp.ToolContext, text: str) -> str:
    """Ask the client's language model for a one-line summary of ``text``."""
    result = await ctx.sample(f"Summarize in one line: {text}", max_tokens=50)
    content = result.content
    if isinstance(content, trimcp.TextContent):
        return f"{result.model} says: {content.text}"
    return f"{result.model} answered with {type(content).__name__}"


@attrs.frozen
class Confirmation:
    """What ``confirm`` asks the user for."""

    ok: bool
    note: str = ""


@server.tool()
async def confirm(ctx: trimcp.ToolContext, action: str) -> str:
    """Ask the user to confirm ``action`` (elicitation)."""
    answer, content = await ctx.elicit(f"Really {action}?", Confirmation)
    if content is None:
        return f"the user chose {answer.action}"
    verdict = "confirmed" if content.ok else "refused"
    return f"{action}: {verdict}" + (f" ({content.note})" if content.note else "")


if __name__ == "__main__":
    trio.run(trimcp.serve_stdio, server)

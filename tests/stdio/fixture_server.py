"""The server the stdio tests start as ``python -m trimcp serve tests/stdio/fixture_server.py``.

Tools write markers to stderr (``MARK <what>``) so a test can see what happened inside
the child without touching stdout, which belongs to the protocol.
"""

from __future__ import annotations

import contextlib
import os
import sys

import trio

import trimcp

#: Requests read before stdin closed get this long to finish (the default is 5 s: short
#: here so the tests of stdin's end stay quick).
EOF_GRACE = 1.0

server = trimcp.Server(
    "stdio-fixture", version="1.0", limits=trimcp.SessionLimits(eof_grace=EOF_GRACE)
)


def mark(what: str) -> None:
    sys.stderr.write(f"MARK {what}\n")
    sys.stderr.flush()


@server.tool()
async def echo(text: str) -> str:
    """Return ``text``."""
    return text


@server.tool()
async def count(ctx: trimcp.ToolContext, steps: int) -> int:
    """Report ``steps`` progress notifications, then return ``steps``."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
        await trio.lowlevel.checkpoint()
    return steps


@server.tool()
async def hang(ctx: trimcp.ToolContext) -> str:
    """Block until cancelled; mark the start and the cancellation, and log it to the client."""
    try:
        await ctx.report_progress(0)
        mark(f"hang started {ctx.request_id}")
        await trio.sleep_forever()
    except trio.Cancelled:
        mark(f"hang cancelled {ctx.request_id}")
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(1),
            contextlib.suppress(trimcp.ConnectionClosedError),
        ):
            await ctx.log("info", f"hang {ctx.request_id} cancelled")
        raise
    return "unreachable"


@server.tool()
async def hold() -> str:
    """Return once a line arrives on stdin (an HTTP or WebSocket child does not read it)."""
    mark("hold started")
    stream = trio.lowlevel.FdStream(os.dup(0))
    async with stream:
        await stream.receive_some(1)
    return "released"


@server.tool()
async def chatter(ctx: trimcp.ToolContext) -> str:
    """Send progress notifications until sending fails (blocked once the pipe is full)."""
    mark("chatter started")
    tick = 0
    try:
        while True:
            tick += 1
            await ctx.report_progress(tick)
    finally:
        mark("chatter ended")


@server.tool()
async def noisy(text: str) -> str:
    """Write to stdout behind the protocol's back: ``print``, raw fd 1, and a child."""
    print(f"stray print: {text}")
    os.write(1, b"stray os.write\n")
    await trio.run_process([sys.executable, "-c", "print('stray child output')"])
    return text


@server.tool()
async def summarize(ctx: trimcp.ToolContext, text: str) -> str:
    """Ask the client's model (sampling)."""
    result = await ctx.sample(text, max_tokens=20)
    content = result.content
    assert isinstance(content, trimcp.TextContent)
    return f"{result.model}: {content.text}"


@server.tool()
async def ask(ctx: trimcp.ToolContext, question: str) -> str:
    """Ask the user (elicitation) for a name."""
    answer, content = await ctx.elicit(
        question, {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return f"{answer.action}: {content['name'] if content else '-'}"

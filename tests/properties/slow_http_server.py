"""A server for the conformance machine's HTTP tests: a tool that closes its SSE stream
before answering (the client must resume it), and one that says nothing until
cancelled. Run with ``python -m trimcp serve slow_http_server.py --http 127.0.0.1:0``.
"""

from __future__ import annotations

import trio

import trimcp

server = trimcp.Server("slow-http", version="1.0")


@server.tool()
async def reconnecting(ctx: trimcp.ToolContext) -> str:
    """Closes its SSE stream mid-call; the answer comes on the resumed stream."""
    await ctx.log("info", "before the stream closes")
    await trimcp.close_sse_stream(ctx, retry_ms=50)
    await trio.sleep(0.2)
    return "answered after the resumption"


@server.tool()
async def silent() -> str:
    """Says nothing (no response head either) until cancelled."""
    await trio.sleep_forever()
    return "unreachable"

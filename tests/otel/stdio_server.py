"""A server for the stdio trace-context test: instrumented, with an SDK that records
spans nowhere (so they are real spans with real ids), and a tool that samples."""

from __future__ import annotations

import trio
from opentelemetry.sdk.trace import TracerProvider

import trimcp
from trimcp.otel import Telemetry

server = trimcp.Server("otel-stdio", version="1.0")
Telemetry(tracer_provider=TracerProvider()).instrument(server.middlewares)


@server.tool()
async def ask(ctx: trimcp.ToolContext, prompt: str) -> str:
    """Sample the client's model once; answer with the traceparent the request brought."""
    await ctx.sample(prompt, max_tokens=5)
    return str(ctx.meta.get("traceparent"))


if __name__ == "__main__":
    trio.run(trimcp.serve_stdio, server)

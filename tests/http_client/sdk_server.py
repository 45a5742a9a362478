"""The official Python SDK's Streamable HTTP server, as a peer for interop tests.

Run as ``python sdk_server.py [json|sse]``: binds 127.0.0.1 on a free port, prints
``PORT <n>`` on stdout once listening, and serves until killed. With ``json`` the server
answers POSTs with JSON bodies instead of SSE streams; with ``sse`` it serves only the
2024-11-05 HTTP+SSE transport (``GET /sse``, ``POST /messages/``: ``mcp.server.sse``).
"""

from __future__ import annotations

import socket
import sys
import warnings

import anyio
import mcp_types as types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.simplefilter("ignore")

server = MCPServer("sdk-peer")


@server.tool()
def add(a: float, b: float) -> str:
    """Add two numbers."""
    return f"sum={a + b:g}"


@server.tool()
async def progress(ctx: Context, steps: int) -> str:
    """Report progress ``steps`` times."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    return "done"


CANCELLED: list[str] = []


@server.tool()
async def sleepy(seconds: float) -> str:
    """Sleep (to be cancelled)."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        CANCELLED.append("sleepy")
        raise
    return "woke up"


@server.tool()
def cancelled() -> str:
    """Which calls were cancelled so far."""
    return ",".join(CANCELLED)


@server.tool()
async def sample(ctx: Context, prompt: str) -> str:
    """Ask the client's LLM."""
    result = await ctx.request_context.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=50,
        related_request_id=ctx.request_id,
    )
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else repr(content)
    return f"llm said: {text}"


class Person(BaseModel):
    name: str
    age: int = 0


@server.tool()
async def ask(ctx: Context) -> str:
    """Elicit a person."""
    answer = await ctx.elicit("Who are you?", Person)
    if answer.action == "accept":
        return f"hello {answer.data.name} ({answer.data.age})"
    return f"no answer: {answer.action}"


async def main() -> None:
    json_response = "json" in sys.argv[1:]
    if "sse" in sys.argv[1:]:
        app = server.sse_app(host="127.0.0.1")
    else:
        app = server.streamable_http_app(json_response=json_response, host="127.0.0.1")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print("PORT", sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)

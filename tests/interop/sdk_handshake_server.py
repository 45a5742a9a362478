"""An official-SDK (``mcp`` 2.x) stdio server that speaks the handshake era only.

The SDK's low-level ``Server`` driven by its handshake-only loop (``serve_loop``, what
SDK servers of the handshake era were): it knows no ``server/discover``. Warnings and
errors it logs go to the file named by ``argv[1]``, so a test can check that a client
did nothing it objects to. Run as ``python sdk_handshake_server.py LOGFILE``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

ADD = types.Tool(
    name="add",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ADD])


async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    total = int(arguments["a"]) + int(arguments["b"])
    return types.CallToolResult(content=[types.TextContent(text=str(total))])


server = Server(
    "sdk-handshake-only", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    async with stdio_server() as (read, write), server.lifespan(server) as state:
        await serve_loop(
            server,
            read,
            write,
            lifespan_state=state,
            init_options=server.create_initialization_options(),
        )


if __name__ == "__main__":
    logging.basicConfig(filename=sys.argv[1], level=logging.WARNING)
    anyio.run(main)

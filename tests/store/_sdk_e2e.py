"""Run by test_fleet.py in a subprocess: the official Python SDK's Streamable HTTP
client drives one session through the balancer and prints what it saw as JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def elicitation(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


def text(result: Any) -> str:
    return str(result.content[0].text)


async def main(url: str) -> None:
    out: dict[str, Any] = {}
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitation) as session,
    ):
        init = await session.initialize()
        out["version"] = init.protocol_version
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        out["pids"] = [text(await session.call_tool("where", {})) for _ in range(6)]
        out["form"] = text(await session.call_tool("form", {}))
        out["poll"] = text(await session.call_tool("poll", {}))
    print(json.dumps(out))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])

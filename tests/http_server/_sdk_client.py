"""Run by test_interop.py in a subprocess: the official Python SDK's Streamable HTTP
client drives a trimcp server and prints what it saw as one JSON object."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def sampling(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    prompt = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"echo {prompt}"),
        model="sdk-test",
    )


async def elicitation(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def main(url: str) -> None:
    out: dict[str, Any] = {}
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(
            read, write, sampling_callback=sampling, elicitation_callback=elicitation
        ) as session,
    ):
        init = await session.initialize()
        out["version"] = init.protocol_version
        tools = await session.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        echo = await session.call_tool("echo", {"text": "hello"})
        out["echo"] = echo.content[0].text  # type: ignore[union-attr]
        chatty = await session.call_tool("chatty", {"count": 3}, progress_callback=on_progress)
        out["chatty"] = chatty.content[0].text  # type: ignore[union-attr]
        out["progress"] = progress
        ask = await session.call_tool("ask", {"prompt": "hi"})
        out["ask"] = ask.content[0].text  # type: ignore[union-attr]
        form = await session.call_tool("form", {})
        out["form"] = form.content[0].text  # type: ignore[union-attr]
        with anyio.move_on_after(0.5):
            await session.call_tool("wait_release", {})
        out["cancelled"] = True
        after = await session.call_tool("echo", {"text": "still alive"})
        out["after_cancel"] = after.content[0].text  # type: ignore[union-attr]
    print(json.dumps(out))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])

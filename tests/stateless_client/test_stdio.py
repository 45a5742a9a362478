"""The stateless era over stdio: a ``trimcp serve`` child detected, MRTR, listen teardown."""

from __future__ import annotations

import sys

import trio

import trimcp

from ..stdio._child import FIXTURE


async def sampling(
    _ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, trimcp.TextContent)
    return trimcp.CreateMessageResult(
        role="assistant", content=trimcp.TextContent(text=content.text.upper()), model="m"
    )


async def elicitation(
    _ctx: trimcp.HandlerContext, _params: trimcp.ElicitParams
) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"name": "Ada"})


async def test_auto_detects_a_stdio_child_and_runs_rounds_and_listen() -> None:
    command = trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", FIXTURE)
    with trio.fail_after(20):
        async with trimcp.open_client(
            command, era="auto", sampling=sampling, elicitation=elicitation
        ) as client:
            assert client.stateless
            summary = await client.call_tool("summarize", {"text": "trio"})
            assert summary.content[0] == trimcp.TextContent(text="m: TRIO")
            asked = await client.call_tool("ask", {"question": "Name?"})
            assert asked.content[0] == trimcp.TextContent(text="accept: Ada")
            for _ in range(2):  # open, tear down (notifications/cancelled), open again
                async with client.listen(tools=True) as sub:
                    assert sub.acknowledged == {"toolsListChanged": True}
            echoed = await client.call_tool("echo", {"text": "still here"})
            assert echoed.content[0] == trimcp.TextContent(text="still here")

"""A trimcp client driving ``trimcp serve`` children through ``stdio_command``."""

from __future__ import annotations

import sys
from typing import Any

import trio

import trimcp
from trimcp.nursery import HandlerContext
from trimcp.protocol import LoggingMessageParams

from ._child import FIXTURE


def command() -> trimcp.transports.StdioCommand:
    return trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", FIXTURE)


async def sampling(
    _ctx: HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, trimcp.TextContent)
    return trimcp.CreateMessageResult(
        role="assistant", content=trimcp.TextContent(text=content.text.upper()), model="m"
    )


async def elicitation(_ctx: HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    assert params.requested_schema["properties"] == {"name": {"type": "string"}}
    return trimcp.ElicitResult(action="accept", content={"name": "Ada"})


def text(result: trimcp.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, trimcp.TextContent)
    return block.text


async def test_list_and_call_tools() -> None:
    with trio.fail_after(10):
        async with trimcp.open_client(command(), era="handshake") as client:
            assert client.server_info is not None
            assert client.server_info.name == "stdio-fixture"
            names = {tool.name for tool in await client.list_all_tools()}
            assert {"echo", "count", "hang", "summarize", "ask"} <= names
            assert text(await client.call_tool("echo", {"text": "héllo"})) == "héllo"
            bad = await client.call_tool("echo", {"text": 3})
            assert bad.is_error


async def test_concurrent_progress_cancel_and_reverse_calls() -> None:
    """One session: progress, a cancelled call the server sees, sampling and elicitation."""
    logs: list[Any] = []
    cancelled_logged = trio.Event()
    progress: list[tuple[float, float | None]] = []
    results: dict[str, Any] = {}

    async def on_log(message: LoggingMessageParams) -> None:
        logs.append(message.data)
        if "cancelled" in str(message.data):
            cancelled_logged.set()

    with trio.fail_after(10):
        async with trimcp.open_client(
            command(), sampling=sampling, elicitation=elicitation, on_log=on_log, era="handshake"
        ) as client:

            async def counted() -> None:
                async def on_progress(done: float, total: float | None, _m: str | None) -> None:
                    progress.append((done, total))

                results["count"] = await client.call_tool(
                    "count", {"steps": 5}, on_progress=on_progress
                )

            async def cancelled() -> None:
                with trio.CancelScope() as scope:

                    async def on_progress(_d: float, _t: float | None, _m: str | None) -> None:
                        scope.cancel()  # the handler is running: it reported progress

                    await client.call_tool("hang", {}, on_progress=on_progress)
                results["hang cancelled"] = scope.cancelled_caught
                await cancelled_logged.wait()

            async def sampled() -> None:
                results["summarize"] = text(await client.call_tool("summarize", {"text": "abc"}))

            async def elicited() -> None:
                results["ask"] = text(await client.call_tool("ask", {"question": "Name?"}))

            async with trio.open_nursery() as nursery:
                for job in (counted, cancelled, sampled, elicited):
                    nursery.start_soon(job)
            # The session is still healthy afterwards.
            assert text(await client.call_tool("echo", {"text": "after"})) == "after"
            assert client.session.pending == 0

    assert progress == [(float(n), 5.0) for n in range(1, 6)]
    assert results["count"].structured_content == {"result": 5}
    assert results["hang cancelled"] is True
    assert any("cancelled" in str(entry) for entry in logs)
    assert results["summarize"] == "m: ABC"
    assert results["ask"] == "accept: Ada"


async def test_client_exit_shuts_the_child_down_quickly() -> None:
    """Leaving the block closes stdin; a well-behaved server exits at once (no SIGTERM)."""
    with trio.fail_after(10):
        async with trimcp.open_client(command(), era="handshake") as client:
            await client.ping()
            start = trio.current_time()
    # Shutting down took well under the 2 s grace of the shutdown sequence.
    assert trio.current_time() - start < 1.5

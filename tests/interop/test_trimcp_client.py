"""A trimcp stdio client against an official-SDK stdio server (``sdk_server.py``)."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import trio

import trimcp
from trimcp.nursery import HandlerContext
from trimcp.protocol import LoggingMessageParams

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "sdk_server.py")


def command() -> trimcp.transports.StdioCommand:
    return trimcp.stdio_command(sys.executable, SERVER)


async def sampling(
    _ctx: HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, trimcp.TextContent)
    assert params.system_prompt == "be brief"
    return trimcp.CreateMessageResult(
        role="assistant", content=trimcp.TextContent(text=content.text[::-1]), model="trimcp-llm"
    )


async def elicitation(_ctx: HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    assert params.message == "Who are you?"
    assert set(params.requested_schema["properties"]) == {"name", "age"}
    return trimcp.ElicitResult(action="accept", content={"name": "Ada", "age": 36})


def text(result: trimcp.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, trimcp.TextContent)
    return block.text


async def test_list_and_call_tools() -> None:
    with trio.fail_after(15):
        async with trimcp.open_client(command(), era="handshake") as client:
            assert client.server_info is not None
            assert client.server_info.name == "sdk-interop"
            tools = {tool.name: tool for tool in await client.list_all_tools()}
            assert {"add", "count", "hang", "summarize", "register"} <= set(tools)
            assert set(tools["add"].input_schema["properties"]) == {"a", "b"}
            result = await client.call_tool("add", {"a": 40, "b": 2})
            assert not result.is_error
            assert text(result) == "42"
            bad = await client.call_tool("add", {"a": "x", "b": 2})
            assert bad.is_error
            await client.ping()


async def test_progress_cancellation_and_reverse_calls() -> None:
    updates: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async def on_log(message: LoggingMessageParams) -> None:
        logs.append(message.data)

    with trio.fail_after(15):
        async with trimcp.open_client(
            command(), sampling=sampling, elicitation=elicitation, on_log=on_log, era="handshake"
        ) as client:
            result = await client.call_tool("count", {"steps": 3}, on_progress=on_progress)
            assert text(result) == "counted 3"
            assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            with trio.CancelScope() as scope:

                async def started(_p: float, _t: float | None, _m: str | None) -> None:
                    scope.cancel()

                await client.call_tool("hang", {"label": "one"}, on_progress=started)
            assert scope.cancelled_caught
            # The SDK server's handler saw the cancellation.
            seen = await client.call_tool("was_cancelled", {"label": "one"})
            assert text(seen) == "true"

            assert text(await client.call_tool("summarize", {"text": "abc"})) == (
                "trimcp-llm/assistant: cba"
            )
            assert text(await client.call_tool("register", {})) == "Ada is 36"
            assert text(await client.call_tool("log_something", {"text": "hi"})) == "logged"
            assert {"said": "hi"} in logs


async def test_concurrent_calls() -> None:
    """Several calls in flight at once over one SDK session, answered out of order."""
    results: dict[int, str] = {}
    with trio.fail_after(15):
        async with trimcp.open_client(command(), sampling=sampling, era="handshake") as client:

            async def one(n: int) -> None:
                if n % 2:
                    results[n] = text(await client.call_tool("add", {"a": n, "b": n}))
                else:
                    results[n] = text(await client.call_tool("summarize", {"text": str(n)}))

            async with trio.open_nursery() as nursery:
                for n in range(8):
                    nursery.start_soon(one, n)
    assert results == {
        n: (str(2 * n) if n % 2 else f"trimcp-llm/assistant: {str(n)[::-1]}") for n in range(8)
    }


async def test_reverse_calls_without_handlers_are_refused() -> None:
    """No handlers: trimcp declares nothing and answers the SDK's request -32601.

    The SDK server sends ``sampling/createMessage`` without checking the client's
    capabilities, and turns the error it gets back into the ``tools/call`` error.
    """
    with trio.fail_after(15):
        async with trimcp.open_client(command(), era="handshake") as client:
            with pytest.raises(trimcp.McpError) as info:
                await client.call_tool("summarize", {"text": "x"})
            assert info.value.code == -32601
            assert "sampling/createMessage" in info.value.message
            assert client.session.pending == 0
            assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18"])
async def test_every_handshake_version(version: str) -> None:
    with trio.fail_after(15):
        async with trimcp.open_client(
            command(), protocol_version=version, era="handshake"
        ) as client:
            assert client.protocol_version == version
            assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"


async def test_cancelling_a_call_while_the_sdk_server_elicits() -> None:
    """Cancel ``tools/call`` while the SDK tool waits on elicitation: the SDK handler is
    cancelled; whether the SDK also cancels its reverse call shows in the trimcp handler."""
    started = trio.Event()
    handler_cancelled = trio.Event()

    async def blocking(_ctx: HandlerContext, _params: trimcp.ElicitParams) -> trimcp.ElicitResult:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            handler_cancelled.set()
            raise
        raise AssertionError("unreachable")

    with trio.fail_after(15):
        async with trimcp.open_client(command(), elicitation=blocking, era="handshake") as client:
            async with trio.open_nursery() as nursery:
                scope = trio.CancelScope()

                async def call() -> None:
                    with scope:
                        await client.call_tool("ask_forever", {})

                nursery.start_soon(call)
                await started.wait()
                scope.cancel()
            seen = await client.call_tool("was_cancelled", {"label": "ask_forever"})
            assert text(seen) == "true"
            # The SDK sent notifications/cancelled for its elicitation request too.
            with trio.fail_after(5):
                await handler_cancelled.wait()
            assert client.session.in_flight == 0

"""The official Python SDK's stdio client against a trimcp stdio server.

The SDK runs on anyio, which runs on Trio, so these tests drive it directly in the
test's Trio run (no subprocess bridge): the SDK's task groups and cancel scopes are
Trio's underneath.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import mcp_types as types
import pytest
import trio
from mcp import ClientSession, MCPDeprecationWarning, MCPError, StdioServerParameters, stdio_client
from mcp.client.context import ClientRequestContext

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "trimcp_server.py")


def params() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "trimcp", "serve", SERVER], env=dict(os.environ)
    )


async def sampling(
    _context: ClientRequestContext, request: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    content = request.messages[0].content
    assert isinstance(content, types.TextContent)
    assert request.system_prompt == "be brief"
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=content.text[::-1]),
        model="sdk-model",
    )


async def elicitation(
    _context: ClientRequestContext, request: types.ElicitRequestParams
) -> types.ElicitResult:
    assert request.message == "Who are you?"
    schema: dict[str, Any] = request.requested_schema  # type: ignore[union-attr]
    assert set(schema["properties"]) == {"name", "age"}
    return types.ElicitResult(action="accept", content={"name": "Grace", "age": 85})


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_initialize_list_and_call() -> None:
    with trio.fail_after(15):
        async with stdio_client(params()) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "trimcp-interop"
            assert init.capabilities.tools is not None
            tools = await session.list_tools()
            names = {tool.name for tool in tools.tools}
            assert {"add", "count", "hang", "summarize", "register"} <= names
            add = next(tool for tool in tools.tools if tool.name == "add")
            assert add.input_schema["properties"].keys() == {"a", "b"}
            result = await session.call_tool("add", {"a": 20, "b": 22})
            assert not result.is_error
            assert result.structured_content == {"result": 42}
            bad = await session.call_tool("add", {"a": "x", "b": 1})
            assert bad.is_error
            await session.send_ping()


async def test_progress_cancellation_and_reverse_calls() -> None:
    updates: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    with trio.fail_after(15):
        async with (
            stdio_client(params()) as (read, write),
            ClientSession(
                read,
                write,
                sampling_callback=sampling,
                elicitation_callback=elicitation,
                logging_callback=on_log,
            ) as session,
        ):
            await session.initialize()
            result = await session.call_tool("count", {"steps": 3}, progress_callback=on_progress)
            assert text(result) == "counted 3"
            assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            # Cancel a call once the trimcp handler is running (it reported progress).
            with anyio.CancelScope() as scope:

                async def started(_p: float, _t: float | None, _m: str | None) -> None:
                    scope.cancel()

                await session.call_tool("hang", {"label": "one"}, progress_callback=started)
            assert scope.cancelled_caught
            # notifications/cancelled reached the handler: it saw trio.Cancelled.
            seen = await session.call_tool("was_cancelled", {"label": "one"})
            assert seen.structured_content == {"result": True}

            sampled = await session.call_tool("summarize", {"text": "abc"})
            assert text(sampled) == "sdk-model/assistant: cba"
            registered = await session.call_tool("register", {})
            assert text(registered) == "Grace is 85"
            assert text(await session.call_tool("log_something", {"text": "hi"})) == "logged"
            assert {"said": "hi"} in logs
            # logging/setLevel above the message's level silences it.
            with pytest.warns(MCPDeprecationWarning):  # deprecated in the stateless era
                await session.set_logging_level("error")
            assert text(await session.call_tool("log_something", {"text": "quiet"})) == "logged"
            await session.send_ping()
            assert {"said": "quiet"} not in logs


async def test_reverse_calls_without_sdk_callbacks_fail_cleanly() -> None:
    """No callbacks: the SDK declares no capabilities, the trimcp tool refuses to ask,
    and the SDK reads the refusal as the missing capability it is (-32021)."""
    with trio.fail_after(15):
        async with stdio_client(params()) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            arguments: dict[str, dict[str, Any]] = {"summarize": {"text": "x"}, "register": {}}
            needed = {"summarize": "sampling", "register": "elicitation"}
            for tool, args in arguments.items():
                with pytest.raises(MCPError, match="Missing required client capability") as info:
                    await session.call_tool(tool, args)
                assert info.value.error.code == -32021
                data = types.MissingRequiredClientCapabilityErrorData.model_validate(
                    info.value.error.data
                )
                wanted = data.required_capabilities.model_dump(exclude_none=True)
                assert wanted == {needed[tool]: {}}


async def test_cancelling_a_call_cancels_its_reverse_call_in_the_sdk_client() -> None:
    """Cancel ``tools/call`` while the trimcp tool waits on elicitation: trimcp cancels
    the reverse call, and the SDK client's elicitation callback is interrupted."""
    started = trio.Event()
    callback_cancelled = trio.Event()

    async def blocking_elicitation(
        _context: ClientRequestContext, _request: types.ElicitRequestParams
    ) -> types.ElicitResult:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            callback_cancelled.set()
            raise
        raise AssertionError("unreachable")

    with trio.fail_after(15):
        async with (
            stdio_client(params()) as (read, write),
            ClientSession(read, write, elicitation_callback=blocking_elicitation) as session,
        ):
            await session.initialize()
            async with trio.open_nursery() as nursery:
                scope = trio.CancelScope()

                async def call() -> None:
                    with scope:
                        await session.call_tool("ask_forever", {})

                nursery.start_soon(call)
                await started.wait()
                scope.cancel()
            with trio.fail_after(5):
                await callback_cancelled.wait()
            # The session is still usable.
            assert (await session.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }


async def test_tools_take_python_names_and_common_types() -> None:
    with trio.fail_after(15):
        async with stdio_client(params()) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            schema = tools["create_item"].input_schema
            assert set(schema["properties"]) == {"item", "max_results", "due", "owner"}
            assert schema["additionalProperties"] is False
            assert schema["properties"]["max_results"]["minimum"] == 0
            assert schema["properties"]["item"]["properties"]["name"]["description"] == (
                "what it is called."
            )
            arguments = {
                "item": {"name": "widget"},
                "max_results": 0,
                "due": "2024-05-01",
                "owner": {"email": "a@b.c", "since": "2020-01-02"},
            }
            # The SDK checks structuredContent against the advertised outputSchema.
            result = await session.call_tool("create_item", arguments)
            assert not result.is_error
            assert result.structured_content == {
                "item": {"name": "widget", "quantity": 1},
                "max_results": 0,
                "due": "2024-05-01",
                "owner": {"email": "a@b.c", "since": "2020-01-02"},
                "ref": "00000000-0000-0000-0000-000000000000",
            }
            # camelCase (or any unknown key) is refused, never silently dropped.
            wrong = await session.call_tool("create_item", {"item": {"name": "w"}, "maxResults": 0})
            assert wrong.is_error
            assert "unknown field(s) maxResults" in text(wrong)
            negative = await session.call_tool(
                "create_item", {"item": {"name": "w"}, "max_results": -1}
            )
            assert negative.is_error
            assert "expected at least 0 @ $.arguments.max_results" in text(negative)
            flat = await session.call_tool("create_item", {"name": "w"})
            assert flat.is_error
            assert 'item is one argument: pass {"item": {"name": ...}}' in text(flat)


async def test_typed_prompt_arguments() -> None:
    with trio.fail_after(15):
        async with stdio_client(params()) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.get_prompt("plan", {"days": "3", "start": "2024-05-01"})
            content = result.messages[0].content
            assert isinstance(content, types.TextContent)
            assert content.text == "3 days from Wednesday 01 May 2024"
            with pytest.raises(MCPError) as info:
                await session.get_prompt("plan", {"days": "three", "start": "2024-05-01"})
            assert info.value.error.code == -32602
            assert "argument days: expected int" in info.value.error.message

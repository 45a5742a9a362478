"""Everything a server sends validates against the schema of the negotiated revision."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trimcp import (
    CreateMessageParams,
    CreateMessageResult,
    ElicitParams,
    ElicitResult,
    Root,
    Server,
    TextContent,
    ToolContext,
    open_client,
)
from trimcp.nursery import HandlerContext
from trimcp.protocol import HANDSHAKE_VERSIONS
from trimcp.wire import Response

from ._schema_check import SchemaCheck, check


def _server() -> Server:
    server = Server("schema", version="1.0", instructions="check me")

    @server.tool(title="Everything")
    async def everything(ctx: ToolContext, note: str = "") -> dict[str, Any]:
        await ctx.report_progress(1, 3, "sampling")
        sampled = await ctx.sample("hi", max_tokens=5, system_prompt="be brief")
        await ctx.report_progress(2, 3)
        if ctx.session.client_capabilities.elicitation is not None:
            await ctx.elicit("ok?", {"type": "object", "properties": {"yes": {"type": "boolean"}}})
        await ctx.list_roots()
        await ctx.log("info", {"note": note})
        await ctx.report_progress(3, 3)
        assert isinstance(sampled.content, TextContent)
        return {"sampled": sampled.content.text}

    @server.tool()
    async def stuck(ctx: ToolContext) -> str:
        await ctx.sample("block", max_tokens=1)
        return "never"

    return server


async def sampler(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, TextContent)
    if content.text == "block":
        await trio.sleep_forever()
    return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")


async def elicit(ctx: HandlerContext, params: ElicitParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"yes": True})


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_every_server_message_validates(version: str, autojump_clock: Any) -> None:
    server = _server()
    recorder = SchemaCheck().install(server.middlewares)
    has_elicitation = version >= "2025-06-18"

    async def progress(p: float, t: float | None, m: str | None) -> None:
        pass

    async with open_client(
        server.in_memory(),
        protocol_version=version,
        sampling=sampler,
        elicitation=elicit if has_elicitation else None,
        roots=[Root(uri="file:///r", name="r")],
        era="handshake",
    ) as client:
        await client.ping()
        await client.set_logging_level("debug")
        await client.list_all_tools()
        result = await client.call_tool("everything", {"note": "n"}, on_progress=progress)
        assert not result.is_error
        bad = await client.call_tool("everything", {"note": 5})
        assert bad.is_error
        with trio.move_on_after(5):
            await client.call_tool("stuck")
        await trio.testing.wait_all_tasks_blocked()
    seen = recorder.validate(version)
    expected = {
        "InitializeResult": 1,
        "EmptyResult": 2,  # ping and logging/setLevel
        "ListToolsResult": 1,
        "CallToolResult": 2,
        "ProgressNotification": 3,
        "CreateMessageRequest": 2,
        "ListRootsRequest": 1,
        "LoggingMessageNotification": 1,
        "CancelledNotification": 1,
    }
    if has_elicitation:
        expected["ElicitRequest"] = 1
    for definition, count in expected.items():
        assert seen[definition] == count, (definition, seen)
    assert seen["JSONRPCMessage"] == len(recorder.sent)


def test_the_checker_rejects_invalid_messages() -> None:
    # A check that validation is real: each of these breaks its revision's schema.
    with pytest.raises(AssertionError):
        check("2025-06-18", "CallToolResult", {"isError": False})  # no content
    with pytest.raises(AssertionError):
        check("2024-11-05", "ListToolsResult", {"tools": [{"name": "t"}]})  # no inputSchema
    with pytest.raises(AssertionError):
        check(
            "2025-11-25",
            "ProgressNotification",
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
        )


async def test_the_recorder_pairs_responses_with_their_requests() -> None:
    server = _server()
    recorder = SchemaCheck().install(server.middlewares)
    async with open_client(
        server.in_memory(), sampling=sampler, roots=[], era="handshake"
    ) as client:
        await client.list_tools()
    methods = [method for message, method in recorder.sent if isinstance(message, Response)]
    assert methods == ["initialize", "tools/list"]

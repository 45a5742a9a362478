"""Sampling with tools end to end, and roots with ``list_changed``, on the client."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trimcp import (
    CreateMessageParams,
    CreateMessageResult,
    ElicitResult,
    McpError,
    Root,
    SamplingMessage,
    Server,
    TextContent,
    Tool,
    ToolContext,
    open_client,
)
from trimcp.client import Elicitation, FormRequest, Sampling
from trimcp.nursery import HandlerContext, Session
from trimcp.protocol import ElicitationCapability, ToolChoice, ToolResultContent, ToolUseContent
from trimcp.wire import INVALID_PARAMS

from ..core._schema_check import SchemaCheck

WAIT = 30
WEATHER = Tool(
    name="weather",
    description="Weather in a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def _server() -> Server:
    server = Server("sampler")

    @server.tool()
    async def agent(ctx: ToolContext) -> dict[str, Any]:
        first = await ctx.sample(
            "Weather in Paris?", max_tokens=50, tools=[WEATHER], tool_choice="required"
        )
        assert isinstance(first.content, list)
        use = first.content[0]
        assert isinstance(use, ToolUseContent)
        history = [
            SamplingMessage(role="user", content=TextContent(text="Weather in Paris?")),
            SamplingMessage(role="assistant", content=[use]),
            SamplingMessage(
                role="user",
                content=[
                    ToolResultContent(tool_use_id=use.id, content=[TextContent(text="sunny")])
                ],
            ),
        ]
        second = await ctx.sample(history, max_tokens=50, tools=[WEATHER])
        assert isinstance(second.content, TextContent)
        return {"tool": use.name, "input": use.input, "answer": second.content.text}

    @server.tool()
    async def roots(ctx: ToolContext) -> list[str]:
        return [root.uri for root in await ctx.list_roots()]

    return server


async def test_sampling_with_tools_end_to_end() -> None:
    server = _server()
    check = SchemaCheck(server)
    seen: list[CreateMessageParams] = []

    async def model(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        seen.append(params)
        if len(seen) == 1:
            use = ToolUseContent(id="call-1", name="weather", input={"city": "Paris"})
            return CreateMessageResult(
                role="assistant", content=[use], model="m", stop_reason="toolUse"
            )
        return CreateMessageResult(role="assistant", content=TextContent(text="Sunny"), model="m")

    async with open_client(
        server.in_memory(), sampling=Sampling(handler=model, tools=True), era="handshake"
    ) as c:
        capability = c.state.client_capabilities.sampling
        assert capability is not None
        assert capability.tools == {}
        with trio.fail_after(WAIT):
            result = await c.call_tool("agent")
    assert result.structured_content == {
        "tool": "weather",
        "input": {"city": "Paris"},
        "answer": "Sunny",
    }
    # The handler got the tools and the tool choice typed.
    assert seen[0].tools == [WEATHER]
    assert seen[0].tool_choice == ToolChoice(mode="required")
    assert isinstance(seen[1].messages[2].content, list)
    assert isinstance(seen[1].messages[2].content[0], ToolResultContent)
    assert check.validate("2025-11-25")["CreateMessageRequest"] == 2


async def _raw_sample(server: Server, params: dict[str, Any]) -> int:
    session: Session = next(iter(server.sessions))
    with pytest.raises(McpError) as info:
        await session.request("sampling/createMessage", params)
    return info.value.code


async def test_the_client_refuses_tools_it_did_not_declare_and_broken_turns() -> None:
    server = _server()

    async def model(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        raise AssertionError("not called")

    tools = {"name": "t", "inputSchema": {"type": "object"}}
    use = {"type": "tool_use", "id": "1", "name": "t", "input": {}}
    async with open_client(server.in_memory(), sampling=model, era="handshake") as client:
        assert client.state.client_capabilities.sampling is not None
        assert client.state.client_capabilities.sampling.tools is None
        text = {"role": "user", "content": {"type": "text", "text": "hi"}}
        code = await _raw_sample(server, {"messages": [text], "maxTokens": 5, "tools": [tools]})
        assert code == INVALID_PARAMS
    async with open_client(
        server.in_memory(), sampling=Sampling(handler=model, tools=True), era="handshake"
    ):
        unanswered = {"role": "assistant", "content": [use]}
        code = await _raw_sample(server, {"messages": [unanswered], "maxTokens": 5})
        assert code == INVALID_PARAMS


async def test_set_roots_notifies_and_the_server_sees_the_new_list() -> None:
    server = _server()
    changed = trio.Event()

    @server.middlewares.server_recv.add
    async def watch(message: Any, call_next: Any) -> None:
        if getattr(message, "method", None) == "notifications/roots/list_changed":
            changed.set()
        await call_next(message)

    first = [Root(uri="file:///a", name="a")]
    async with open_client(server.in_memory(), roots=first, era="handshake") as client:
        capability = client.state.client_capabilities.roots
        assert capability is not None
        assert capability.list_changed is True
        before = await client.call_tool("roots")
        await client.set_roots([Root(uri="file:///b"), Root(uri="file:///c")])
        with trio.fail_after(WAIT):
            await changed.wait()
        after = await client.call_tool("roots")
    assert before.structured_content == {"result": ["file:///a"]}
    assert after.structured_content == {"result": ["file:///b", "file:///c"]}


async def test_roots_from_a_handler_and_no_roots() -> None:
    server = _server()

    async def dynamic(ctx: HandlerContext) -> list[Root]:
        return [Root(uri="file:///dyn")]

    async with open_client(server.in_memory(), roots=dynamic, era="handshake") as client:
        result = await client.call_tool("roots")
    assert result.structured_content == {"result": ["file:///dyn"]}
    async with open_client(server.in_memory(), era="handshake") as client:
        with pytest.raises(McpError, match="without roots"):
            await client.set_roots([])


@pytest.mark.parametrize(
    ("version", "elicitation", "sampling_tools"),
    [
        ("2024-11-05", None, None),
        ("2025-03-26", None, None),
        ("2025-06-18", ElicitationCapability(), None),
        ("2025-11-25", ElicitationCapability(form={}, url={}), {}),
    ],
)
async def test_declared_capabilities_fit_the_requested_revision(
    version: str, elicitation: ElicitationCapability | None, sampling_tools: Any
) -> None:
    server = _server()

    async def model(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(text="x"), model="m")

    async def form(ctx: HandlerContext, request: FormRequest) -> ElicitResult:
        return request.decline()

    async def url(ctx: HandlerContext, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async with open_client(
        server.in_memory(),
        protocol_version=version,
        sampling=Sampling(handler=model, tools=True),
        elicitation=Elicitation(form=form, url=url),
        era="handshake",
    ) as client:
        declared = client.state.client_capabilities
        session = next(iter(server.sessions))
        assert session.state.client_capabilities.elicitation == elicitation
    assert declared.elicitation == elicitation
    assert declared.sampling is not None
    assert declared.sampling.tools == sampling_tools


def test_the_server_never_elicits_on_a_revision_without_elicitation() -> None:
    from trimcp.nursery import SessionState
    from trimcp.protocol import ClientCapabilities
    from trimcp.server._elicitation import form_elicitation_error

    declared = ClientCapabilities(elicitation=ElicitationCapability())
    old = SessionState(protocol_version="2025-03-26", client_capabilities=declared)
    new = SessionState(protocol_version="2025-06-18", client_capabilities=declared)
    error = form_elicitation_error(old)
    assert error is not None
    assert error.capability == "elicitation"
    assert form_elicitation_error(new) is None

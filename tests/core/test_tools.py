"""The tools API: pagination, calls, list_changed, structured output, revisions."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio

from trimcp import McpError, Server, ToolContext, open_client
from trimcp.dispatch import CallNext, Middlewares
from trimcp.protocol import HANDSHAKE_VERSIONS
from trimcp.wire import INVALID_PARAMS, ErrorResponse, Message, Notification, Response

from ._schema_check import SchemaCheck
from ._support import WAIT, served


def _many_tools(count: int, page_size: int) -> Server:
    server = Server("s", page_size=page_size)
    for i in range(count):

        async def tool(x: int = 0) -> int:
            return x

        server.tool(name=f"t{i}", description=f"tool {i}")(tool)
    return server


async def test_pagination_pages_and_list_all() -> None:
    server = _many_tools(5, page_size=2)
    check = SchemaCheck().install(server.middlewares)
    async with open_client(server.in_memory(), era="handshake") as client:
        first = await client.list_tools()
        assert [t.name for t in first.tools] == ["t0", "t1"]
        assert first.next_cursor is not None
        second = await client.list_tools(first.next_cursor)
        assert [t.name for t in second.tools] == ["t2", "t3"]
        assert second.next_cursor is not None
        last = await client.list_tools(second.next_cursor)
        assert [t.name for t in last.tools] == ["t4"]
        assert last.next_cursor is None
        every = await client.list_all_tools()
        assert [t.name for t in every] == [f"t{i}" for i in range(5)]
        assert every[3].description == "tool 3"
    assert check.validate("2025-11-25")["ListToolsResult"] == 6


async def test_an_invalid_cursor_is_invalid_params() -> None:
    server = _many_tools(3, page_size=2)
    async with open_client(server.in_memory(), era="handshake") as client:
        for cursor in ("garbage!", "dG9vbHM6eA==", "cHJvbXB0czoy", "x" * 100):
            with pytest.raises(McpError) as info:
                await client.list_tools(cursor)
            assert info.value.code == INVALID_PARAMS
            assert "cursor" in info.value.message
        assert len((await client.list_tools()).tools) == 2  # still fine


async def test_tools_call_with_arguments_and_context() -> None:
    server = Server("s")

    @server.tool()
    async def greet(ctx: ToolContext, name: str, times: int = 1) -> str:
        """Say hello."""
        return " ".join([f"hi {name}"] * times) + f" (req {ctx.request_id})"

    async with open_client(server.in_memory(), era="handshake") as client:
        (tool,) = await client.list_all_tools()
        assert tool.description == "Say hello."
        assert set(tool.input_schema["properties"]) == {"name", "times"}
        assert tool.input_schema["required"] == ["name"]
        result = await client.call_tool("greet", {"name": "ada", "times": 2})
        assert not result.is_error
        assert result.content[0].text.startswith("hi ada hi ada (req ")  # type: ignore[union-attr]


async def test_list_changed_reaches_initialized_clients_on_add_and_remove() -> None:
    server = Server("s", declare_tools=True)
    notes: list[str] = []
    changed = trio.Event()
    middlewares = Middlewares()

    @middlewares.client_recv.add
    async def watch(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Notification):
            notes.append(message.method)
            changed.set()
        await call_next(message)

    async with served(server, initialize=False) as (raw, _raw_session):
        async with open_client(
            server.in_memory(), middlewares=middlewares, era="handshake"
        ) as client:
            assert client.state.server_capabilities.tools is not None
            assert client.state.server_capabilities.tools.list_changed
            assert (await client.list_tools()).tools == []

            async def late(x: int) -> int:
                return x

            server.tool(name="late")(late)
            with trio.fail_after(WAIT):
                await changed.wait()
            assert notes == ["notifications/tools/list_changed"]
            assert [t.name for t in (await client.list_tools()).tools] == ["late"]
            changed = trio.Event()
            server.remove_tool("late")
            with trio.fail_after(WAIT):
                await changed.wait()
            assert notes == ["notifications/tools/list_changed"] * 2
            assert (await client.list_tools()).tools == []
        # The raw peer never initialized: it was told nothing.
        assert await raw.quiet_drain() == []


async def test_list_changed_is_schema_valid_in_every_revision() -> None:
    for version in HANDSHAKE_VERSIONS:
        server = Server("s", declare_tools=True)
        check = SchemaCheck().install(server.middlewares)
        async with served(server, version=version) as (peer, _session):

            async def t() -> str:
                return "x"

            server.tool(name="t")(t)
            note = await peer.receive()
            assert note == Notification(method="notifications/tools/list_changed")
        assert check.validate(version)["ToolListChangedNotification"] == 1


@attrs.frozen
class Weather:
    city: str
    celsius: float


def _structured_server() -> Server:
    server = Server("s")

    @server.tool(title="Weather report")
    async def weather(city: str) -> Weather:
        return Weather(city=city, celsius=21.5)

    return server


async def test_structured_output_schema_and_content() -> None:
    server = _structured_server()
    check = SchemaCheck().install(server.middlewares)
    async with open_client(server.in_memory(), era="handshake") as client:
        (tool,) = await client.list_all_tools()
        assert tool.title == "Weather report"
        assert tool.output_schema is not None
        assert tool.output_schema["type"] == "object"
        assert set(tool.output_schema["properties"]) == {"city", "celsius"}
        result = await client.call_tool("weather", {"city": "Oslo"})
        assert result.structured_content == {"city": "Oslo", "celsius": 21.5}
        assert result.content  # a text rendering goes along for older clients
    seen = check.validate("2025-11-25")
    assert seen["ListToolsResult"] == 1
    assert seen["CallToolResult"] == 1


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_tool_listing_leaves_out_what_a_revision_lacks(version: str) -> None:
    server = _structured_server()
    check = SchemaCheck().install(server.middlewares)
    async with served(server, version=version) as (peer, _session):
        reply = await peer.request(1, "tools/list")
        assert isinstance(reply, Response)
        (tool,) = reply.result["tools"]
        modern = version >= "2025-06-18"
        assert ("outputSchema" in tool) is modern
        assert ("title" in tool) is modern
        assert tool["name"] == "weather"
        call = await peer.request(2, "tools/call", {"name": "weather", "arguments": {"city": "x"}})
        assert isinstance(call, Response)
        # The result follows the same rule; the text rendering is there for everyone.
        assert ("structuredContent" in call.result) is modern
        assert call.result["content"][0]["text"] == '{"city":"x","celsius":21.5}'
    seen = check.validate(version)
    assert seen["ListToolsResult"] == 1
    assert seen["CallToolResult"] == 1


async def test_tools_list_with_tools_capability_but_no_initialize_is_rejected() -> None:
    async with served(_structured_server(), initialize=False) as (peer, _session):
        reply = await peer.request(1, "tools/list")
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == -32600


async def test_a_replaced_tool_keeps_one_entry() -> None:
    server = Server("s")

    async def v1() -> str:
        return "one"

    async def v2() -> str:
        return "two"

    server.tool(name="t")(v1)
    server.tool(name="t")(v2)
    async with open_client(server.in_memory(), era="handshake") as client:
        tools: list[Any] = await client.list_all_tools()
        assert [t.name for t in tools] == ["t"]
        assert (await client.call_tool("t")).content[0].text == "two"  # type: ignore[union-attr]

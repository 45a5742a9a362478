"""The client checks ``structuredContent`` against the tool's ``outputSchema``."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio

from trimcp import Server, open_client
from trimcp.client import OutputSchemaError, OutputSchemas
from trimcp.dispatch import CallNext
from trimcp.protocol import CallToolResult, TextContent, Tool
from trimcp.wire import Message, Request, Response

WAIT = 30


@attrs.frozen
class Count:
    word: str
    count: int


def _server(tamper: dict[str, Any] | None) -> tuple[Server, list[str]]:
    """A server with a structured tool; ``tamper`` rewrites its results on the way out
    (``{"drop": True}`` removes ``structuredContent``). Returns the methods received."""
    server = Server("out")
    received: list[str] = []

    @server.tool()
    async def count(word: str) -> Count:
        return Count(word=word, count=len(word))

    @server.tool()
    async def plain() -> str:
        return "text only"

    @server.middlewares.server_recv.add
    async def note(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request):
            received.append(message.method)
        await call_next(message)

    @server.middlewares.server_send.add
    async def rewrite(message: Message, call_next: CallNext) -> None:
        result = getattr(message, "result", None)
        if tamper is not None and isinstance(result, dict) and "structuredContent" in result:
            result = dict(result)
            if tamper.get("drop"):
                del result["structuredContent"]
            else:
                result["structuredContent"] = tamper
            assert isinstance(message, Response)
            message = Response(id=message.id, result=result)
        await call_next(message)

    return server, received


async def test_a_conforming_result_passes_and_the_schema_is_listed_once() -> None:
    server, received = _server(None)
    async with open_client(server.in_memory(), era="handshake") as client:
        with trio.fail_after(WAIT):
            first = await client.call_tool("count", {"word": "trio"})
            second = await client.call_tool("count", {"word": "nursery"})
            await client.call_tool("plain")
    assert first.structured_content == {"word": "trio", "count": 4}
    assert second.structured_content == {"word": "nursery", "count": 7}
    # The first call to an unknown tool lists the tools once; later calls use the cache.
    assert received.count("tools/list") == 1


async def test_a_mismatch_raises_a_typed_error_with_the_result() -> None:
    server, _ = _server({"word": "x", "count": "four"})
    async with open_client(server.in_memory(), era="handshake") as client:
        await client.list_all_tools()
        with pytest.raises(OutputSchemaError) as info:
            await client.call_tool("count", {"word": "four"})
    assert info.value.tool == "count"
    assert info.value.errors == ["$.count: 'four' is not of type 'integer'"]
    assert info.value.result.structured_content == {"word": "x", "count": "four"}


async def test_a_missing_structured_content_is_an_error() -> None:
    server, _ = _server({"drop": True})
    async with open_client(server.in_memory(), era="handshake") as client:
        # Unlisted: an unstructured result costs no listing and is not checked.
        unchecked = await client.call_tool("count", {"word": "a"})
        assert unchecked.structured_content is None
        await client.list_tools()
        with pytest.raises(OutputSchemaError, match="no structuredContent"):
            await client.call_tool("count", {"word": "a"})
        # Opting out returns the result as sent.
        result = await client.call_tool("count", {"word": "a"}, validate_output=False)
    assert result.structured_content is None


async def test_older_revisions_are_not_checked() -> None:
    server, received = _server({"drop": True})
    async with open_client(
        server.in_memory(), protocol_version="2025-03-26", era="handshake"
    ) as client:
        result = await client.call_tool("count", {"word": "abc"})
    assert result.structured_content is None
    assert "tools/list" not in received


async def test_list_changed_forgets_the_cached_schemas() -> None:
    server, received = _server(None)
    changed = trio.Event()

    async def on_changed() -> None:
        changed.set()

    async with open_client(
        server.in_memory(), on_tools_list_changed=on_changed, era="handshake"
    ) as client:
        await client.call_tool("count", {"word": "a"})
        assert client.output_schemas.known("count")

        @server.tool()
        async def extra() -> Count:
            return Count(word="", count=0)

        with trio.fail_after(WAIT):
            await changed.wait()
        assert not client.output_schemas.known("count")
        await client.call_tool("extra")
    assert received.count("tools/list") == 2


def _result(structured: Any, *, is_error: bool | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text="x")], structured_content=structured, is_error=is_error
    )


def test_the_cache_is_bounded_and_errors_are_not_checked() -> None:
    schemas = OutputSchemas(limit=2)
    schema = {"type": "object", "required": ["a"]}
    schemas.remember(Tool(name=n, input_schema={}, output_schema=schema) for n in "xyz")
    assert len(schemas) == 2
    assert not schemas.known("x")
    assert not schemas.complete
    schemas.check("z", _result({"a": 1}))
    schemas.check("z", _result(None, is_error=True))
    with pytest.raises(OutputSchemaError, match="'a' is a required property"):
        schemas.check("z", _result({}))


def test_a_broken_schema_is_reported_not_raised_raw() -> None:
    schemas = OutputSchemas()
    schemas.remember([Tool(name="t", input_schema={}, output_schema={"type": 12})])
    with pytest.raises(OutputSchemaError, match="unusable outputSchema"):
        schemas.check("t", _result({}))

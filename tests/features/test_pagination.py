"""Every list is paginated on the server, and the client can take one page or all."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import McpError, Server, open_client
from trimcp.client import _pages
from trimcp.client._pages import all_pages
from trimcp.dispatch import CallNext
from trimcp.wire import INVALID_PARAMS, Message, Request, Response

from ..core._schema_check import HANDSHAKE, SchemaCheck

COUNT = 5


def _server(page_size: int) -> Server:
    server = Server("pages", page_size=page_size)
    for i in range(COUNT):

        async def tool() -> str:
            return "ok"

        server.tool(name=f"tool{i}")(tool)

        async def resource() -> str:
            return "text"

        server.resource(f"res://{i}", name=f"res{i}")(resource)

        async def template(id: str) -> str:
            return id

        server.resource_template(f"tmpl{i}://{{id}}", name=f"tmpl{i}")(template)

        async def prompt() -> str:
            return "hi"

        server.prompt(name=f"prompt{i}")(prompt)
    return server


@pytest.mark.parametrize("version", HANDSHAKE)
async def test_one_page_or_all_pages_of_every_list(version: str) -> None:
    server = _server(page_size=2)
    check = SchemaCheck(server)
    async with open_client(server.in_memory(), protocol_version=version, era="handshake") as client:
        first = await client.list_tools()
        assert [t.name for t in first.tools] == ["tool0", "tool1"]
        second = await client.list_tools(first.next_cursor)
        assert [t.name for t in second.tools] == ["tool2", "tool3"]
        assert [t.name for t in await client.list_all_tools()] == [f"tool{i}" for i in range(5)]
        assert [p.name for p in await client.list_all_prompts()] == [f"prompt{i}" for i in range(5)]
        assert [r.name for r in await client.list_all_resources()] == [f"res{i}" for i in range(5)]
        templates = await client.list_all_resource_templates()
        assert [t.name for t in templates] == [f"tmpl{i}" for i in range(5)]
        last = await client.list_prompts((await client.list_prompts()).next_cursor)
        assert last.next_cursor is not None
        assert (await client.list_resources(None)).next_cursor is not None
        # A cursor of one list is refused by another.
        with pytest.raises(McpError) as info:
            await client.list_prompts(first.next_cursor)
        assert info.value.code == INVALID_PARAMS
    seen = check.validate(version, strict=True)
    # 3 + 3 pages of tools (one page, the next, all), 3 of prompts + 2, ...
    assert seen["ListToolsResult"] == 5
    assert seen["ListPromptsResult"] == 5
    assert seen["ListResourcesResult"] == 4
    assert seen["ListResourceTemplatesResult"] == 3


async def test_a_server_repeating_its_cursor_does_not_loop_the_client() -> None:
    server = _server(page_size=2)
    asked: list[str | None] = []

    @server.middlewares.server_recv.add
    async def note(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request) and message.method == "tools/list":
            asked.append((message.params or {}).get("cursor"))
        await call_next(message)

    @server.middlewares.server_send.add
    async def stuck(message: Message, call_next: CallNext) -> None:
        result: Any = getattr(message, "result", None)
        cursor = asked[-1] if asked else None
        if isinstance(message, Response) and isinstance(result, dict) and cursor is not None:
            # Answer the second page with its own cursor again: a loop.
            message = Response(id=message.id, result={**result, "nextCursor": cursor})
        await call_next(message)

    async with open_client(server.in_memory(), era="handshake") as client:
        tools = await client.list_all_tools()
    assert [t.name for t in tools] == ["tool0", "tool1", "tool2", "tool3"]
    assert len(asked) == 2


async def test_one_page_when_everything_fits() -> None:
    server = _server(page_size=100)
    async with open_client(server.in_memory(), era="handshake") as client:
        page = await client.list_tools()
    assert len(page.tools) == COUNT
    assert page.next_cursor is None


@attrs.frozen
class _Page:
    items: list[int]
    next_cursor: str | None


def _model(cursors: list[str | None]) -> tuple[list[str | None], list[int]]:
    """What a walk must ask for and collect when page ``i`` lists ``[i]`` and gives
    ``cursors[i]`` as the next cursor: it ends at no cursor, or at the one it asked with."""
    asked: list[str | None] = [None]
    for i, cursor in enumerate(cursors):
        if not cursor or cursor == asked[-1]:
            return asked, list(range(i + 1))
        asked.append(cursor)
    raise AssertionError("the last page has no cursor")


@given(st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=30))
@settings(max_examples=200, deadline=None)
def test_every_list_all_walks_pages_the_same_way(given_cursors: list[str]) -> None:
    cursors: list[str | None] = [*given_cursors, None]
    asked: list[str | None] = []

    async def page(cursor: str | None) -> _Page:
        await trio.lowlevel.checkpoint()
        asked.append(cursor)
        return _Page([len(asked) - 1], cursors[len(asked) - 1])

    expected_asked, expected = _model(cursors)
    assert trio.run(all_pages, "x/list", page, lambda p: p.items) == expected
    assert asked == expected_asked


async def test_cursors_that_cycle_end_in_an_error_naming_the_method(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_pages, "MAX_PAGES", 3)
    calls: list[str | None] = []

    async def page(cursor: str | None) -> _Page:
        calls.append(cursor)
        return _Page([len(calls)], "b" if cursor == "a" else "a")

    with pytest.raises(McpError) as info:
        await all_pages("tasks/list", page, lambda p: p.items)
    assert info.value.code == INVALID_PARAMS
    assert info.value.message == "tasks/list returned more than 3 pages"
    assert calls == [None, "a", "b"]

"""Tests of the to-do server, with trimcp's pytest plugin (run by pytest-trio)."""

import pytest
import trio
from server import server

import trimcp

pytestmark = pytest.mark.trio


@pytest.fixture
def mcp_server() -> trimcp.Server:
    return server  # the server that the mcp_client fixture connects to


async def test_add_returns_the_item(mcp_client: trimcp.Client) -> None:
    result = await mcp_client.call_tool("add", {"title": "Write the docs"})
    assert result.structured_content == {"id": 1, "title": "Write the docs", "done": False}


async def test_an_unknown_item_is_a_tool_error(mcp_client: trimcp.Client) -> None:
    result = await mcp_client.call_tool("finish", {"item_id": 42})
    assert result.is_error
    assert result.content[0].text == "there is no item 42"


async def test_bad_arguments_never_reach_the_tool(mcp_client: trimcp.Client) -> None:
    result = await mcp_client.call_tool("add", {"title": 7})
    assert result.is_error
    assert "expected str" in result.content[0].text


async def test_review_reports_progress(
    mcp_client: trimcp.Client, autojump_clock: trio.testing.MockClock
) -> None:
    # The mock clock jumps over the tool's trio.sleep: the test takes no real time.
    for title in ("Write the docs", "Ship it"):
        await mcp_client.call_tool("add", {"title": title})
    seen = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    result = await mcp_client.call_tool("review", on_progress=on_progress)
    assert result.content[0].text == "reviewed 2 items"
    assert seen == [(1, 2, "Write the docs"), (2, 2, "Ship it")]


async def test_each_connection_has_its_own_list(mcp_connect) -> None:
    first = await mcp_connect(server)
    second = await mcp_connect(server)
    await first.call_tool("add", {"title": "only in the first"})
    listing = await second.read_resource("todo://items")
    assert listing.contents[0].text == "[]"


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_prompt_in_both_eras(mcp_connect, era: str) -> None:
    client = await mcp_connect(server, era=era)
    await client.call_tool("add", {"title": "Write the docs"})
    prompt = await client.get_prompt("plan_day", {"hours": "3"})
    assert prompt.messages[0].content.text.startswith("I have 3 hours today.")

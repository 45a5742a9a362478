"""The MCP Apps example (examples/apps): its server as a real ``trimcp serve`` process
over stdio, driven by a trimcp client that renders apps and by one that does not."""

from __future__ import annotations

import os
import sys

import trio

import trimcp
from trimcp.protocol import APP_MIME_TYPE

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.path.join(ROOT, "examples", "apps", "server.py")


def _serve() -> trimcp.transports.StdioCommand:
    return trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", SERVER)


async def test_the_dice_app_over_stdio() -> None:
    with trio.fail_after(60):
        async with trimcp.open_client(_serve(), apps=True) as client:
            tools = {t.name: t for t in await client.list_all_tools()}
            assert set(tools) == {"roll", "history"}
            assert client.tool_view_uri(tools["roll"]) == "ui://dice/roller.html"
            assert [t.name for t in client.model_tools(list(tools.values()))] == ["roll"]
            view = await client.read_app_view(tools["roll"])
            assert view.html.startswith("<!DOCTYPE html>")
            assert "ui/initialize" in view.html  # the view speaks the apps dialect
            assert view.prefers_border is True
            rolled = await client.call_tool("roll", {"sides": 6, "count": 3})
            roll = rolled.structured_content
            assert isinstance(roll, dict)
            assert len(roll["rolls"]) == 3
            assert all(1 <= n <= 6 for n in roll["rolls"])
            assert roll["total"] == sum(roll["rolls"])
            past = await client.call_tool("history")
            assert past.structured_content == {"result": [roll["rolls"]]}
            resources = await client.list_all_resources()
            assert [(r.uri, r.mime_type) for r in resources] == [
                ("ui://dice/roller.html", APP_MIME_TYPE)
            ]

        async with trimcp.open_client(_serve()) as plain:
            tools = {t.name: t for t in await plain.list_all_tools()}
            assert list(tools) == ["roll"]
            assert tools["roll"].meta is None
            text = (await plain.call_tool("roll", {"sides": 20, "count": 1})).content[0]
            assert isinstance(text, trimcp.TextContent)
            assert '"sides":20' in text.text

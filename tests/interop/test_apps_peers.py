"""MCP Apps (io.modelcontextprotocol/ui) against peers nobody here wrote.

* A host on the official TypeScript SDK client and the MCP Apps SDK's host helpers
  (``tests/interop/node/drive_apps.mjs``) drives ``examples/apps/server.py`` under
  ``trimcp serve`` over stdio: with the extension declared it finds the view through
  the SDK's own ``getToolUiResourceUri``, the tool and view metadata pass the SDK's
  schemas, the app-only tool is recognised; without it the tool is plain.
* trimcp's client drives the MCP Apps SDK's own example app server
  (``@modelcontextprotocol/server-basic-vanillajs``, stdio) in both eras and reads its
  tool's view.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio

import trimcp
from trimcp.protocol import APP_MIME_TYPE

from ._node import MODULES, SDK, node_env, require_node, run_node_script

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "apps" / "server.py"
EXT_APPS = MODULES / "ext-apps" / "package.json"
BASIC_APP = MODULES / "server-basic-vanillajs" / "dist" / "index.js"


async def test_a_typescript_apps_host_drives_the_trimcp_example() -> None:
    node = require_node(SDK, EXT_APPS)
    argv = ["drive_apps.mjs", sys.executable, "-m", "trimcp", "serve", str(EXAMPLE)]
    seen = await run_node_script(node, *argv)
    view = "ui://dice/roller.html"
    apps, plain = seen["apps"], seen["plain"]
    assert apps["declared"] == {"mimeTypes": [APP_MIME_TYPE]}
    assert apps["serverExtensions"] == {"io.modelcontextprotocol/ui": {}}
    for name, app_only in (("roll", False), ("history", True)):
        tool = apps["tools"][name]
        assert tool["uri"] == tool["flatKey"] == view
        assert tool["appOnly"] is app_only
        assert tool["toolMetaValid"] is True
        assert tool["viewMimeType"] == APP_MIME_TYPE
        assert tool["viewStart"] == "<!DOCTYPE html>"
        assert tool["viewMetaValid"] is True
        assert tool["prefersBorder"] is True
    assert plain["tools"] == {"roll": {"uri": None, "flatKey": None, "appOnly": False}}
    for run in (apps, plain):
        assert run["rolled"]["sides"] == 6
        assert len(run["rolled"]["rolls"]) == 2
        assert json.loads(run["rolledText"]) == run["rolled"]  # the text fallback


@pytest.mark.parametrize("era", ["auto", "handshake"])
async def test_trimcp_reads_the_view_of_the_apps_sdk_example_server(era: str) -> None:
    node = require_node(BASIC_APP)
    transport = trimcp.stdio_command(node, str(BASIC_APP), "--stdio", env=node_env())
    with trio.fail_after(60):
        async with trimcp.open_client(transport, apps=True, era=era) as client:  # type: ignore[arg-type]
            (tool,) = await client.list_all_tools()
            assert tool.name == "get-time"
            assert client.tool_view_uri(tool) == "ui://get-time/mcp-app.html"
            assert client.model_tools([tool]) == [tool]
            view = await client.read_app_view(tool)
            assert view.uri == "ui://get-time/mcp-app.html"
            assert view.html.startswith("<!DOCTYPE html>")
            result = await client.call_tool("get-time")
            assert isinstance(result.structured_content, dict)
            assert "time" in result.structured_content

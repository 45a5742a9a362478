"""MCP Apps (io.modelcontextprotocol/ui) between trimcp's server and client, both eras:
the views, the tools that point at them, and what a client that renders no apps sees."""

from __future__ import annotations

from typing import Any

import pytest
import trio

import trimcp
from trimcp.protocol import APP_MIME_TYPE, UI_EXTENSION, supports_apps
from trimcp.wire import INVALID_PARAMS

WAIT = 30
VIEW = "ui://weather/dashboard"


def weather_server() -> trimcp.Server:
    server = trimcp.Server("weather")

    @server.app(
        VIEW,
        name="Weather dashboard",
        csp={"connectDomains": ["https://api.example.com"]},
        permissions=["geolocation"],
        domain="weather.example",
        prefers_border=False,
    )
    async def dashboard(ctx: trimcp.ToolContext) -> str:
        """An interactive weather dashboard."""
        assert ctx.session is not None
        return "<!DOCTYPE html><html><body>weather</body></html>"

    @server.tool(ui=VIEW, meta={"example.com/kept": 1})
    async def get_weather(city: str) -> str:
        """Current weather."""
        return f"sunny in {city}"

    @server.tool(ui=VIEW, visibility=["app"])
    async def refresh() -> str:
        """Refresh the dashboard's data."""
        return "refreshed"

    @server.tool()
    async def plain() -> str:
        return "plain"

    return server


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_host_that_renders_apps_sees_and_reads_the_views(era: str) -> None:
    server = weather_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), apps=True, era=era) as client:  # type: ignore[arg-type]
            assert UI_EXTENSION in (client.state.server_capabilities.extensions or {})
            tools = {t.name: t for t in await client.list_all_tools()}
            assert set(tools) == {"get_weather", "refresh", "plain"}
            assert tools["get_weather"].meta == {
                "example.com/kept": 1,
                "ui": {"resourceUri": VIEW},
                "ui/resourceUri": VIEW,
            }
            assert client.tool_view_uri(tools["refresh"]) == VIEW
            assert client.tool_view_uri(tools["plain"]) is None
            assert [t.name for t in client.model_tools(list(tools.values()))] == [
                "get_weather",
                "plain",
            ]
            view = await client.read_app_view("get_weather")
            assert view == trimcp.AppView(
                uri=VIEW,
                html="<!DOCTYPE html><html><body>weather</body></html>",
                csp={"connectDomains": ["https://api.example.com"]},
                permissions=("geolocation",),
                domain="weather.example",
                prefers_border=False,
            )
            assert await client.read_app_view(tools["refresh"]) == view
            assert await client.read_app_view(VIEW) == view
            raw = await client.read_resource(VIEW)
            assert raw.contents[0].mime_type == APP_MIME_TYPE
            listed = {r.uri: r for r in await client.list_all_resources()}
            assert listed[VIEW].mime_type == APP_MIME_TYPE
            for target in ("plain", "nope", "test://x"):
                with pytest.raises(trimcp.McpError) as info:
                    await client.read_app_view(target)
                assert info.value.code == INVALID_PARAMS


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_other_clients_get_plain_tools_and_no_app_only_ones(era: str) -> None:
    server = weather_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era=era) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in await client.list_all_tools()}
            assert set(tools) == {"get_weather", "plain"}
            assert tools["get_weather"].meta == {"example.com/kept": 1}
            result = await client.call_tool("get_weather", {"city": "Oslo"})
            assert result.content == [trimcp.TextContent(text="sunny in Oslo")]


async def test_the_capability_is_read_per_request_in_the_stateless_era() -> None:
    server = weather_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="stateless") as client:
            plain = await client.request("tools/list", {})
            caps: dict[str, Any] = {
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}
                }
            }
            rich = await client.request("tools/list", {"_meta": caps})
    assert len(plain["tools"]) == 2
    assert len(rich["tools"]) == 3
    # A host declaring the extension with other MIME types only renders no HTML apps.
    assert not supports_apps({UI_EXTENSION: {"mimeTypes": ["text/uri-list"]}})
    assert not supports_apps({UI_EXTENSION: {}})


def test_registration_errors() -> None:
    server = trimcp.Server("bad")
    with pytest.raises(ValueError, match="ui://"):
        server.app("https://example.com/view")
    with pytest.raises(ValueError, match="ui://"):

        @server.tool(ui="https://example.com/view")
        async def one() -> str:
            return ""

    for visibility in ([], ["agent"]):
        with pytest.raises(ValueError, match="visibility"):

            @server.tool(ui=VIEW, visibility=visibility)
            async def two() -> str:
                return ""

    with pytest.raises(ValueError, match="needs ui="):

        @server.tool(visibility=["app"])
        async def three() -> str:
            return ""

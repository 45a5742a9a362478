"""Servers the middleware tests drive."""

from __future__ import annotations

import trio

import trimcp


def tool_server(**options: object) -> trimcp.Server:
    server = trimcp.Server("mw", version="1.0", **options)  # type: ignore[arg-type]
    server.calls = {"read": 0}  # type: ignore[attr-defined]

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    async def broken() -> str:
        """Fail on purpose, with details nobody outside should read."""
        raise trimcp.McpError(-32099, "db at 10.0.0.7 said: password expired")

    @server.tool()
    async def soft() -> str:
        """A tool error."""
        raise trimcp.ToolError("disk /srv/secret full")

    @server.tool()
    async def hold() -> str:
        """Wait until cancelled."""
        await trio.sleep_forever()
        return "never"

    @server.resource("memo://today", name="today")
    async def today() -> str:
        server.calls["read"] += 1  # type: ignore[attr-defined]
        return f"read {server.calls['read']}"  # type: ignore[attr-defined]

    return server

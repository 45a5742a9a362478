"""A client for the MCP conformance harness, built on trimcp's public API only.

The harness runs ``python client.py <server-url>`` with the scenario name in
``MCP_CONFORMANCE_SCENARIO`` and judges what it sees on the wire. Scenarios:

* ``initialize``: connect (initialize + initialized) and close.
* ``tools_call``: list the tools and call ``add_numbers``.
* ``elicitation-sep1034-client-defaults``: call the tool, and answer the server's
  elicitation by accepting the schema's defaults.
* ``sse-retry``: call ``test_reconnection``, whose SSE stream the server cuts before the
  result; the transport resumes it with GET + ``Last-Event-ID`` after ``retry`` ms.

An unknown scenario exits with status 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

import trimcp

Scenario = Callable[[str], Awaitable[None]]


async def initialize(url: str) -> None:
    async with trimcp.open_client(trimcp.streamable_http(url), name="trimcp-conformance") as c:
        print("initialized:", c.protocol_version, c.server_info)


async def tools_call(url: str) -> None:
    async with trimcp.open_client(trimcp.streamable_http(url), name="trimcp-conformance") as c:
        tools = await c.list_all_tools()
        print("tools:", [tool.name for tool in tools])
        result = await c.call_tool("add_numbers", {"a": 5, "b": 3})
        print("result:", result.content)


def schema_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``default`` of every property that declares one."""
    properties = schema.get("properties") or {}
    return {
        name: prop["default"]
        for name, prop in properties.items()
        if isinstance(prop, dict) and "default" in prop
    }


async def accept_defaults(
    _ctx: trimcp.HandlerContext, params: trimcp.ElicitParams
) -> trimcp.ElicitResult:
    content = schema_defaults(params.requested_schema)
    print("elicitation:", params.message, "->", content)
    return trimcp.ElicitResult(action="accept", content=content)


async def elicitation_defaults(url: str) -> None:
    async with trimcp.open_client(
        trimcp.streamable_http(url), name="trimcp-conformance", elicitation=accept_defaults
    ) as c:
        tools = await c.list_all_tools()
        result = await c.call_tool(tools[0].name if tools else "test_client_elicitation_defaults")
        print("result:", result.content)


async def sse_retry(url: str) -> None:
    async with trimcp.open_client(trimcp.streamable_http(url), name="trimcp-conformance") as c:
        result = await c.call_tool("test_reconnection")
        print("result:", result.content)


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
}


def main() -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(sys.argv) < 2:
        print("usage: client.py <server-url>", file=sys.stderr)
        return 2
    run = SCENARIOS.get(scenario)
    if run is None:
        print(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 1
    url = sys.argv[-1]

    async def bounded() -> None:
        with trio.fail_after(50):
            await run(url)

    trio.run(bounded)
    return 0


if __name__ == "__main__":
    sys.exit(main())

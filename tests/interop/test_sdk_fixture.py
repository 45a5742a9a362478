"""The official Python SDK client calls every tool of the conformance fixture server
(``examples/conformance/server.py``) and rejects none of the results.

The SDK checks each result against the tool's ``outputSchema`` (a tool that advertises
one must send matching ``structuredContent``), parses every message with its own
models, and answers sampling, elicitation and roots. A tool may fail as a tool
(``isError``); a JSON-RPC error is accepted only where the fixture means to produce one.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import mcp_types as types
import trio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.context import ClientRequestContext

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "examples", "conformance", "server.py")

#: Tools that answer with a JSON-RPC error by design, and the code they use.
PROTOCOL_ERRORS = {
    "protocol_error_job": -32603,  # its error is the point
    "failing_job": -32601,  # task_support="required": only ever runs as a task
    "test_tool_with_task": -32601,  # likewise
}


def params() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "trimcp", "serve", FIXTURE], env=dict(os.environ)
    )


async def sampling(
    _context: ClientRequestContext, _request: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="m"
    )


def _value(schema: dict[str, Any]) -> Any:
    """A value of a (flat) JSON Schema property: its default, first choice, or a filler."""
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    choices = schema.get("oneOf") or schema.get("anyOf")
    if choices and "const" in choices[0]:
        return choices[0]["const"]
    kind = schema.get("type")
    if kind == "array":
        return [_value(schema.get("items", {}))]
    return {"boolean": True, "integer": 1, "number": 0.5}.get(kind, "x")


async def elicitation(
    _context: ClientRequestContext, request: types.ElicitRequestParams
) -> types.ElicitResult:
    schema: dict[str, Any] = request.requested_schema  # type: ignore[union-attr]
    content = {name: _value(prop) for name, prop in schema.get("properties", {}).items()}
    return types.ElicitResult(action="accept", content=content)


async def roots(_context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/project", name="project")])


def _arguments(tool: types.Tool) -> dict[str, Any]:
    schema = tool.input_schema
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    if "allOf" in schema:  # json_schema_2020_12_tool: one of phone / email is needed
        required |= {"email"}
    return {name: _value(prop) for name, prop in properties.items() if name in required}


async def test_the_sdk_client_accepts_every_fixture_tool_result() -> None:
    outcomes: dict[str, str] = {}
    errors: dict[str, int] = {}
    with trio.fail_after(60):
        async with (
            stdio_client(params()) as (read, write),
            ClientSession(
                read,
                write,
                sampling_callback=sampling,
                elicitation_callback=elicitation,
                list_roots_callback=roots,
            ) as session,
        ):
            await session.initialize()
            tools = (await session.list_tools()).tools
            assert len(tools) > 30
            for tool in tools:
                try:
                    result = await session.call_tool(tool.name, _arguments(tool))
                except MCPError as exc:
                    errors[tool.name] = exc.error.code
                    outcomes[tool.name] = "error"
                    continue
                # call_tool has validated structuredContent against the outputSchema.
                if tool.output_schema is not None:
                    assert result.structured_content is not None, tool.name
                outcomes[tool.name] = "isError" if result.is_error else "ok"
    assert errors == PROTOCOL_ERRORS
    assert {name for name, outcome in outcomes.items() if outcome == "isError"} == {
        "test_error_handling"
    }

"""The fixture server of the MCP conformance harness, built on trimcp's public API.

Run it with ``trimcp serve examples/conformance/server.py --http 127.0.0.1:PORT`` (or
``python examples/conformance/server.py PORT``), then point the harness at
``http://127.0.0.1:PORT/mcp``. It exposes the tools the harness's server scenarios call
and the resources, prompts, completion and skills they read.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import trio

import trimcp

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIA"
    "X8jx0gAAAABJRU5ErkJggg=="
)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = trimcp.Server("trimcp-conformance", version="1.0.0")

# The skills extension (SEP-2640): one skill with supporting files and subdirectories,
# for the sep-2640-skills-* scenarios (skills/list, skills/get, the SKILL.md resource
# and resources/directory/read).
server.add_skill(Path(__file__).resolve().parent.parent / "skills" / "pdf-processing")


@server.tool()
async def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
async def test_image_content() -> trimcp.ImageContent:
    """Returns a 1x1 PNG image."""
    return trimcp.ImageContent(data=PNG, mime_type="image/png")


@server.tool()
async def test_audio_content() -> trimcp.AudioContent:
    """Returns a short WAV clip."""
    return trimcp.AudioContent(data=WAV, mime_type="audio/wav")


@server.tool()
async def test_embedded_resource() -> trimcp.EmbeddedResource:
    """Returns an embedded text resource."""
    return trimcp.EmbeddedResource(
        resource=trimcp.TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


@server.tool()
async def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and an embedded resource."""
    return [
        trimcp.TextContent(text="Multiple content types test:"),
        trimcp.ImageContent(data=PNG, mime_type="image/png"),
        trimcp.EmbeddedResource(
            resource=trimcp.TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            )
        ),
    ]


@server.tool()
async def test_tool_with_logging(ctx: trimcp.ToolContext) -> str:
    """Sends three log messages while it runs."""
    await ctx.log("info", "Tool execution started")
    await trio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await trio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool()
async def test_error_handling() -> str:
    """Always fails, as a tool result with isError."""
    raise trimcp.ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_tool_with_progress(ctx: trimcp.ToolContext) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    for step, value in enumerate((0, 50, 100)):
        if step:
            await trio.sleep(0.05)
        await ctx.report_progress(value, 100)
    return "Tool with progress executed successfully"


@server.tool()
async def test_sampling(ctx: trimcp.ToolContext, prompt: str) -> str:
    """Asks the client's model to answer the prompt."""
    result = await ctx.sample(prompt, max_tokens=100)
    text = getattr(result.content, "text", "")
    return f"LLM response: {text}"


@server.tool()
async def test_elicitation(ctx: trimcp.ToolContext, message: str) -> str:
    """Asks the user for a username and an email address."""
    schema = {
        "type": "object",
        "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
        "required": ["username", "email"],
    }
    result, content = await ctx.elicit(message, schema)
    return f"User response: action={result.action}, content={content}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: trimcp.ToolContext) -> str:
    """Elicitation whose fields have defaults (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
        "required": [],
    }
    result, content = await ctx.elicit("Please review and update the form fields", schema)
    return f"Elicitation completed: action={result.action}, content={content}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: trimcp.ToolContext) -> str:
    """Elicitation with every enum form (SEP-1330)."""
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
        "required": [],
    }
    result, content = await ctx.elicit("Please select options", schema)
    return f"Elicitation completed: action={result.action}, content={content}"


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12)
async def json_schema_2020_12_tool() -> str:
    """A tool whose input schema uses JSON Schema 2020-12 keywords."""
    return "ok"


@server.tool()
async def test_reconnection(ctx: trimcp.ToolContext) -> str:
    """Closes its SSE stream mid-call; the result arrives after the client resumes."""
    await ctx.log("info", "Before disconnect")
    await trimcp.close_sse_stream(ctx, retry_ms=100)
    await trio.sleep(0.2)
    await ctx.log("info", "After reconnect")
    return "Reconnection test completed successfully"


# ---------------------------------------------------------------------- resources


@server.resource("test://static-text", name="Static Text Resource", mime_type="text/plain")
async def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="Static Binary Resource", mime_type="image/png")
async def static_binary() -> bytes:
    """A static binary resource (a 1x1 PNG)."""
    return base64.b64decode(PNG)


@server.resource_template(
    "test://template/{id}/data", name="Resource Template", mime_type="application/json"
)
async def template_data(id: str) -> str:
    """JSON data for any id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", name="Watched Resource", mime_type="text/plain")
async def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content"


# ---------------------------------------------------------------------- prompts


@server.prompt()
async def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


async def _complete_arg1(value: str, _context: Mapping[str, str]) -> list[str]:
    return [word for word in ("test", "testValue1", "example") if word.startswith(value)]


@server.prompt(complete={"arg1": _complete_arg1})
async def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"],
    arg2: Annotated[str, "Second test argument"],
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
async def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, "URI of the resource to embed"],
) -> list[Any]:
    """A prompt that embeds a resource."""
    return [
        trimcp.EmbeddedResource(
            resource=trimcp.TextResourceContents(
                uri=resourceUri,
                mime_type="text/plain",
                text="Embedded resource content for testing.",
            )
        ),
        "Please process the embedded resource above.",
    ]


@server.prompt()
async def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [
        trimcp.ImageContent(data=PNG, mime_type="image/png"),
        "Please analyze the image above.",
    ]


# ---------------------------------------------------------------------- stateless era
# Input rounds (MRTR): in the stateless era each reverse call below becomes an entry of
# an InputRequiredResult under the key it names; in the handshake era it is a live
# request and the key is unused.


def _text_schema(field: str) -> dict[str, Any]:
    return {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}


@server.tool()
async def test_input_required_result_elicitation(ctx: trimcp.ToolContext) -> str:
    """Asks the user for their name, then greets them."""
    _, content = await ctx.elicit("What is your name?", _text_schema("name"), key="user_name")
    return f"Hello, {(content or {}).get('name', 'stranger')}!"


@server.tool()
async def test_input_required_result_sampling(ctx: trimcp.ToolContext) -> str:
    """Asks the client's model a question and returns its answer."""
    result = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"The model said: {getattr(result.content, 'text', '')}"


@server.tool()
async def test_input_required_result_list_roots(ctx: trimcp.ToolContext) -> str:
    """Lists the client's roots."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(root.uri for root in roots)


@server.tool()
async def test_input_required_result_request_state(ctx: trimcp.ToolContext) -> str:
    """Asks for a confirmation; the answer comes back with the sealed request state."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    _, content = await ctx.elicit("Please confirm", schema, key="confirm")
    return f"state-ok: confirmed={(content or {}).get('ok')}"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: trimcp.ToolContext) -> str:
    """Asks for a name, a greeting and the roots at once (one round)."""
    answers: dict[str, Any] = {}

    async def name() -> None:
        answers["name"] = (
            await ctx.elicit("What is your name?", _text_schema("name"), key="user_name")
        )[1]

    async def greeting() -> None:
        answers["greeting"] = await ctx.sample("Generate a greeting", max_tokens=50, key="greeting")

    async def roots() -> None:
        answers["roots"] = await ctx.list_roots(key="client_roots")

    async with trio.open_nursery() as nursery:
        for task in (name, greeting, roots):
            nursery.start_soon(task)
    return f"Got {len(answers)} inputs"


@server.tool()
async def test_input_required_result_multi_round(ctx: trimcp.ToolContext) -> str:
    """Two rounds: a name, then a favourite colour."""
    _, who = await ctx.elicit("Step 1: What is your name?", _text_schema("name"), key="step1")
    _, color = await ctx.elicit(
        "Step 2: What is your favorite color?", _text_schema("color"), key="step2"
    )
    return f"{(who or {}).get('name')} likes {(color or {}).get('color')}"


@server.tool()
async def test_input_required_result_tampered_state(ctx: trimcp.ToolContext) -> str:
    """Asks for a confirmation; a tampered request state is refused by the engine."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    await ctx.elicit("Please confirm", schema, key="confirm")
    return "confirmed"


@server.tool()
async def test_input_required_result_capabilities(ctx: trimcp.ToolContext) -> str:
    """Asks only for what the client declared it can answer."""
    caps = ctx.session.client_capabilities

    async with trio.open_nursery() as nursery:
        if caps.elicitation is not None:
            nursery.start_soon(ctx.elicit, "What is your name?", _text_schema("name"))
        if caps.sampling is not None:
            nursery.start_soon(lambda: ctx.sample("Say hello", max_tokens=20))
    return "done"


@server.prompt()
async def test_input_required_result_prompt(ctx: trimcp.ToolContext) -> str:
    """A prompt that asks the user for context first."""
    _, content = await ctx.elicit(
        "What context should the prompt use?", _text_schema("context"), key="user_context"
    )
    return f"Use this context: {(content or {}).get('context')}"


@server.tool()
async def test_missing_capability(ctx: trimcp.ToolContext) -> str:
    """Needs the client's sampling capability (-32021 without it)."""
    result = await ctx.sample("Say hello", max_tokens=20)
    return getattr(result.content, "text", "")


@server.tool()
async def test_streaming_elicitation(ctx: trimcp.ToolContext) -> str:
    """Asks the user a question (an input round, never a request on the stream)."""
    _, content = await ctx.elicit("What is your name?", _text_schema("name"))
    return f"Hello, {(content or {}).get('name')}!"


@server.tool()
async def test_logging_tool(ctx: trimcp.ToolContext) -> str:
    """Logs at info level (sent only when the request set a log level)."""
    await ctx.log("info", "test_logging_tool ran")
    return "logged"


async def _dynamic() -> str:
    """Added and removed by the change triggers."""
    return "dynamic"


@server.tool()
async def test_trigger_tool_change() -> str:
    """Adds or removes a tool: listeners get notifications/tools/list_changed."""
    if "test_dynamic_tool" in server.tools:
        server.remove_tool("test_dynamic_tool")
        return "removed test_dynamic_tool"
    server.tool(name="test_dynamic_tool")(_dynamic)
    return "added test_dynamic_tool"


@server.tool()
async def test_trigger_prompt_change() -> str:
    """Adds or removes a prompt: listeners get notifications/prompts/list_changed."""
    if "test_dynamic_prompt" in server.prompts:
        server.remove_prompt("test_dynamic_prompt")
        return "removed test_dynamic_prompt"
    server.prompt(name="test_dynamic_prompt")(_dynamic)
    return "added test_dynamic_prompt"


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
        },
        "required": ["region"],
    }
)
async def lookup_by_region(region: str, query: str = "") -> str:
    """Routes on its region argument, mirrored into the Mcp-Param-Region header."""
    return f"region={region} query={query}"


# ---------------------------------------------------------------------- tasks extension
# Fixtures of the io.modelcontextprotocol/tasks scenarios (tasks-*). A tool registered
# with task_support runs as a task when the request declares the extension.


@server.tool()
async def greet(name: str) -> str:
    """Greets by name (never a task)."""
    return f"Hello, {name}!"


#: The longest `slow_compute` may be asked to work (the tasks scenarios ask for 60 s).
SLOW_COMPUTE_MAX = 60


@server.tool(
    task_support="optional",
    input_schema={
        "type": "object",
        "properties": {
            "seconds": {"type": "number", "minimum": 0, "maximum": SLOW_COMPUTE_MAX, "default": 0},
            "label": {"type": "string", "default": ""},
        },
    },
)
async def slow_compute(ctx: trimcp.ToolContext, seconds: float = 0, label: str = "") -> str:
    """Works for `seconds` (0 to 60), reporting progress each second, then reports the
    label (a task when the client allows)."""
    if not 0 <= seconds <= SLOW_COMPUTE_MAX:
        raise trimcp.ToolError(f"seconds must be between 0 and {SLOW_COMPUTE_MAX}")
    done = 0.0
    while done < seconds:
        step = min(1.0, seconds - done)
        await trio.sleep(step)
        done += step
        await ctx.report_progress(done, seconds)
    return f"Computed {label or 'result'} after {seconds:g} s"


@server.tool(task_support="required")
async def failing_job() -> str:
    """Always ends in a tool error after about a second (only ever runs as a task)."""
    await trio.sleep(1)
    raise trimcp.ToolError("The job failed, as this fixture always does")


@server.tool(task_support="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error (the task ends `failed`)."""
    await trio.sleep(0.1)
    raise trimcp.McpError(-32603, "Internal error: the job crashed")


CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
NAME_AND_CONFIRM = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
}


@server.tool(task_support="optional")
async def confirm_delete(ctx: trimcp.ToolContext, filename: str) -> str:
    """Asks the user to confirm, then "deletes" the file."""
    result, content = await ctx.elicit(f"Delete {filename}?", CONFIRM)
    if result.action == "accept" and content and content.get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename}"


@server.tool(task_support="optional")
async def multi_input(ctx: trimcp.ToolContext) -> str:
    """Asks two questions at once, then reports both answers."""
    answers: dict[str, Any] = {}

    async def ask(which: str) -> None:
        _, answers[which] = await ctx.elicit(f"Answer the {which} question", NAME_AND_CONFIRM)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, "first")
        nursery.start_soon(ask, "second")
    return f"Answers: {json.dumps(answers, sort_keys=True)}"


USER_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool(task_support="required", task_handoff="explicit")
async def test_tool_with_task(ctx: trimcp.ToolContext) -> str:
    """Asks for the user's name in the call itself, then goes on as a task."""
    _, content = await ctx.elicit("What is your name?", USER_NAME)
    name = (content or {}).get("name", "stranger")
    await ctx.begin_task(f"Greeting {name}")
    await trio.sleep(0.2)
    return f"Hello, {name}! (from a task)"


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    trio.run(lambda: trimcp.serve_http(server, host="127.0.0.1", port=port))

"""A client for the MCP conformance harness, built on trimcp's public API only.

The harness runs ``python client.py <server-url>`` with the scenario name in
``MCP_CONFORMANCE_SCENARIO`` (and, for some scenarios, JSON in
``MCP_CONFORMANCE_CONTEXT``) and judges what it sees on the wire. Every scenario opens
the client with ``era="auto"``: it probes with ``server/discover`` and speaks the
stateless era (2026-07-28) to a server that answers it, or falls back to
``initialize`` for a handshake-era one. Scenarios:

* ``initialize``: connect and close.
* ``tools_call``: list the tools and call ``add_numbers``.
* ``elicitation-sep1034-client-defaults``: call the tool, and answer the server's
  elicitation by accepting the schema's defaults.
* ``sse-retry``: call ``test_reconnection``, whose SSE stream the server cuts before the
  result; the transport resumes it with GET + ``Last-Event-ID`` after ``retry`` ms.
* ``json-schema-2020-12-preservation``: echo a tool's ``inputSchema`` back verbatim.
* ``request-metadata``: per-request ``_meta`` and the retry after ``-32022``.
* ``sep-2322-client-request-state``: MRTR rounds (``requestState`` echoed, fresh ids).
* ``http-standard-headers``: ``Mcp-Method``/``Mcp-Name`` on every kind of request.
* ``http-custom-headers``: ``Mcp-Param-*`` headers for the context's tool calls.
* ``http-invalid-tool-headers``: call every tool the client kept (invalid ones are left
  out of ``tools/list``).
* ``json-schema-ref-no-deref``: list the tools; a network ``$ref`` is never fetched.
* ``auth/*``: connect with ``auth=OAuth(...)``, list the tools and call each one. The
  grant follows ``MCP_CONFORMANCE_CONTEXT``: client credentials (a secret or a private
  key), workload identity (a JWT assertion), enterprise-managed (an identity provider's
  ID token), else the authorization code flow, whose user step is headless
  (:func:`trimcp.auth.fetch_redirect` reads the authorization server's redirect), with
  pre-registered credentials when the context has them and a client ID metadata
  document URL otherwise. A refused authorization exits with status 1, which the
  scenarios that expect a refusal allow.
* ``sep-2640-client-no-prefetch``: list the skills; no skill file is read.
* ``sep-2640-client-verify-{digest,size,frontmatter}``: load the listed skill, whose
  ``SKILL.md`` fails verification: the load is refused and no supporting file is read.

An unknown scenario exits with status 1.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

import trimcp
from trimcp import auth

Scenario = Callable[[str], Awaitable[None]]
NAME = "trimcp-conformance"


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
    properties = params.requested_schema.get("properties") or {}
    for name, prop in properties.items():  # a yes to every boolean asked without default
        if isinstance(prop, dict) and prop.get("type") == "boolean":
            content.setdefault(name, True)
    print("elicitation:", params.message, "->", content)
    return trimcp.ElicitResult(action="accept", content=content)


async def sample(
    _ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    return trimcp.CreateMessageResult(
        role="assistant",
        content=trimcp.TextContent(text="a sampled answer"),
        model="conformance-model",
    )


def client(url: str, **handlers: Any) -> Any:
    return trimcp.open_client(trimcp.streamable_http(url), name=NAME, era="auto", **handlers)


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible arguments for a tool: a value for each required property."""
    values = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = properties.get(name)
        kind = prop.get("type") if isinstance(prop, dict) else None
        out[name] = values.get(kind, {}) if isinstance(kind, str) else "x"
    return out


async def initialize(url: str) -> None:
    async with client(url) as c:
        print("connected:", c.protocol_version, c.server_info, "stateless:", c.stateless)


async def tools_call(url: str) -> None:
    async with client(url) as c:
        tools = await c.list_all_tools()
        print("tools:", [tool.name for tool in tools])
        result = await c.call_tool("add_numbers", {"a": 5, "b": 3})
        print("result:", result.content)


async def elicitation_defaults(url: str) -> None:
    async with client(url, elicitation=accept_defaults) as c:
        tools = await c.list_all_tools()
        result = await c.call_tool(tools[0].name if tools else "test_client_elicitation_defaults")
        print("result:", result.content)


async def sse_retry(url: str) -> None:
    async with client(url) as c:
        result = await c.call_tool("test_reconnection")
        print("result:", result.content)


async def schema_preservation(url: str) -> None:
    async with client(url) as c:
        tools = {tool.name: tool for tool in await c.list_all_tools()}
        focal = tools["json_schema_2020_12_tool"]
        result = await c.call_tool("json_schema_echo", {"schema": focal.input_schema})
        print("echoed:", result.content)


async def request_metadata(url: str) -> None:
    async with client(url, sampling=sample, elicitation=accept_defaults, roots=[]) as c:
        print("version:", c.protocol_version, "stateless:", c.stateless)
        if c.state.server_capabilities.tools is not None:
            print("tools:", [tool.name for tool in await c.list_all_tools()])


async def request_state(url: str) -> None:
    async with client(url, elicitation=accept_defaults) as c:
        names = [tool.name for tool in await c.list_all_tools()]
        print("tools:", names)
        for name in (
            "test_mrtr_echo_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_state",
            "test_mrtr_no_result_type",
        ):
            result = await c.call_tool(name, {})
            print(name, "->", result.content)


async def standard_headers(url: str) -> None:
    async with client(url) as c:
        for tool in await c.list_all_tools():
            await c.call_tool(tool.name, sample_arguments(tool.input_schema))
        for resource in await c.list_all_resources():
            await c.read_resource(resource.uri)
        for prompt in await c.list_all_prompts():
            await c.get_prompt(prompt.name)
        print("done")


async def custom_headers(url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    async with client(url) as c:
        print("tools:", [tool.name for tool in await c.list_all_tools()])
        for call in context.get("toolCalls") or []:
            result = await c.call_tool(call["name"], call.get("arguments") or {})
            print(call["name"], "->", result.content)


async def invalid_tool_headers(url: str) -> None:
    async with client(url) as c:
        tools = await c.list_all_tools()
        print("kept:", [tool.name for tool in tools])
        for tool in tools:
            await c.call_tool(tool.name, sample_arguments(tool.input_schema))


async def ref_no_deref(url: str) -> None:
    async with client(url) as c:
        for tool in await c.list_all_tools():
            print(tool.name, json.dumps(tool.input_schema))


CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def grant_for(context: dict[str, Any]) -> auth.Grant:
    """The grant the scenario's context calls for (see the module doc)."""
    client_id = context.get("client_id")
    if "idp_id_token" in context:
        return auth.EnterpriseManaged(
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client_id=context["idp_client_id"],
            client_id=client_id,
            client_secret=context.get("client_secret"),
        )
    if "valid_jwt" in context:
        return auth.JwtBearer(assertion=context["valid_jwt"], client_id=client_id)
    if "private_key_pem" in context:
        return auth.ClientCredentials(
            client_id=client_id,
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario.startswith("auth/client-credentials"):
        return auth.ClientCredentials(client_id=client_id, client_secret=context["client_secret"])
    registered = None
    if client_id is not None:
        registered = auth.ClientInfo(
            client_id=client_id, client_secret=context.get("client_secret")
        )
    return auth.AuthorizationCode(
        redirect=auth.fetch_redirect,
        redirect_uri="http://localhost:3000/callback",
        client_name=NAME,
        client=registered,
        client_metadata_url=CLIENT_METADATA_URL,
    )


async def authorized(url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = auth.OAuth(grant_for(context))
    transport = trimcp.streamable_http(url, auth=oauth)
    async with trimcp.open_client(transport, name=NAME, era="auto") as c:
        tools = await c.list_all_tools()
        print("tools:", [tool.name for tool in tools])
        for tool in tools:
            result = await c.call_tool(tool.name, sample_arguments(tool.input_schema))
            print(tool.name, "->", result.content)


async def skills_catalogue(url: str) -> None:
    """A host building its skill registry: the listing only, no file is read."""
    async with client(url) as c:
        for entry in await c.list_all_skills():
            print("skill:", entry.name, "-", entry.description, f"<{entry.uri}>")


async def skills_load(url: str) -> None:
    """A host loading the first listed skill, then the file its SKILL.md points to.

    The harness serves a SKILL.md that fails verification (digest, size or frontmatter):
    loading raises, nothing of it is used, and no supporting file is read."""
    async with client(url) as c:
        entries = await c.list_all_skills()
        if not entries:
            print("no skills listed")
            return
        try:
            skill = await c.load_skill(entries[0])
        except trimcp.SkillVerificationError as exc:
            print("refused:", exc)
            return
        print("loaded:", skill.name)
        print(await skill.read_text("references/FORMS.md"))


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": schema_preservation,
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": ref_no_deref,
    "sep-2640-client-no-prefetch": skills_catalogue,
    "sep-2640-client-verify-digest": skills_load,
    "sep-2640-client-verify-size": skills_load,
    "sep-2640-client-verify-frontmatter": skills_load,
}


def main() -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(sys.argv) < 2:
        print("usage: client.py <server-url>", file=sys.stderr)
        return 2
    run = SCENARIOS.get(scenario) or (authorized if scenario.startswith("auth/") else None)
    if run is None:
        print(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 1
    url = sys.argv[-1]

    async def bounded() -> None:
        with trio.fail_after(50):
            await run(url)

    try:
        trio.run(bounded)
    except trimcp.McpError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

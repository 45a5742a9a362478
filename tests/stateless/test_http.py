"""The stateless shape of Streamable HTTP on a real server, once per engine.

POST only and no session ids; ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name``
and ``Mcp-Param-*`` checked against the body (400 + -32020); statuses of the era's
errors; a closed response stream cancels its request; both eras on one endpoint.
Every JSON-RPC message received is validated against the 2026-07-28 schema.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import trio
import trio.testing

import trimcp

from ._http import bodiless, call, open_post, post, request, serving, stateless_headers
from ._support import ALL_CAPS, VERSION, demo_server, validate_value

SUB = "io.modelcontextprotocol/subscriptionId"


def header_server() -> trimcp.Server:
    server = demo_server()
    state: dict[str, Any] = {"started": trio.Event(), "cancelled": trio.Event()}
    server.state = state  # type: ignore[attr-defined]

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "limit": {"type": "integer", "x-mcp-header": "Limit"},
                "deep": {
                    "type": "object",
                    "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}},
                },
            },
            "required": ["region"],
        }
    )
    async def routed(region: str, limit: int = 0, deep: dict[str, Any] | None = None) -> str:
        """Mirrors its arguments into Mcp-Param headers."""
        return f"{region}:{limit}:{(deep or {}).get('flag')}"

    @server.tool()
    async def hang(ctx: trimcp.ToolContext) -> str:
        """Logs once (so the answer is an SSE stream), then waits to be cancelled."""
        await ctx.log("info", "hanging")
        state["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            state["cancelled"].set()
        return "never"  # pragma: no cover

    return server


def checked(messages: list[dict[str, Any]], method: str) -> None:
    for message in messages:
        validate_value(message, method if "method" not in message else None)


async def test_post_only_no_session_and_a_schema_valid_result(engine: str) -> None:
    async with serving(header_server(), engine) as port:
        reply = await call(port, 1, "tools/list")
        assert reply.status == 200
        assert "mcp-session-id" not in reply.headers
        assert reply.last["result"]["resultType"] == "complete"
        checked(reply.messages, "tools/list")
        rounds = await call(port, 2, "tools/call", {"name": "greet"})
        assert rounds.last["result"]["resultType"] == "input_required"
        checked(rounds.messages, "tools/call")


def _with(body: dict[str, Any], **headers: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    base = stateless_headers(body["method"], body["params"])
    for name, value in headers.items():
        key = name.replace("_", "-")
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return body, base


GREET = request(1, "tools/call", {"name": "greet"})


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        (_with(GREET, mcp_method="tools/list"), 400, -32020),
        (_with(GREET, mcp_method="TOOLS/CALL"), 400, -32020),
        (_with(GREET, mcp_method=None), 400, -32020),
        (_with(GREET, mcp_name="other"), 400, -32020),
        (_with(GREET, mcp_name=None), 400, -32020),
        (_with(GREET, mcp_protocol_version=None), 400, -32020),
        (_with(GREET, mcp_protocol_version="2099-01-01"), 400, -32022),
        # The header's version is checked before header and body are compared.
        (
            _with(
                request(1, "tools/list", version="2099-01-01"), mcp_protocol_version="2099-01-01"
            ),
            400,
            -32022,
        ),
        (
            _with(
                request(1, "tools/list", version="2099-01-01"), mcp_protocol_version="2098-01-01"
            ),
            400,
            -32022,
        ),
        (_with(request(1, "tools/call", {"name": "greet"}, version="2099-01-01")), 400, -32020),
        (_with(request(1, "tools/call", {"name": "greet"}, capabilities={})), 400, -32021),
        (_with(request(1, "no/such")), 404, -32601),
        (_with(request(1, "ping")), 404, -32601),
        (
            (
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/list",
                    "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
                },
                stateless_headers("tools/list", None),
            ),
            400,
            -32602,
        ),
    ],
)
async def test_refusals_have_the_era_status_and_code(
    engine: str, case: tuple[dict[str, Any], dict[str, str]], status: int, code: int
) -> None:
    body, headers = case
    async with serving(header_server(), engine) as port:
        reply = await post(port, body, headers)
    assert (reply.status, reply.last["error"]["code"]) == (status, code)
    assert reply.last["id"] == 1
    checked(reply.messages, body["method"])


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(
    ("arguments", "params", "ok"),
    [
        ({"region": "eu"}, {"Mcp-Param-Region": "eu"}, True),
        ({"region": "eu"}, {"mcp-param-region": _b64("eu")}, True),
        ({"region": " é "}, {"Mcp-Param-Region": _b64(" é ")}, True),
        ({"region": "eu", "limit": 7}, {"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "007"}, True),
        (
            {"region": "eu", "deep": {"flag": False}},
            {"Mcp-Param-Region": "eu", "Mcp-Param-Flag": "false"},
            True,
        ),
        ({"region": "eu"}, {}, False),
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}, False),
        ({"region": "eu"}, {"Mcp-Param-Region": "=?base64?ZXU?="}, False),  # bad padding
        ({"region": "eu"}, {"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "1"}, False),
        (
            {"region": "eu", "limit": 7},
            {"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "seven"},
            False,
        ),
        (
            {"region": "eu", "deep": {"flag": True}},
            {"Mcp-Param-Region": "eu", "Mcp-Param-Flag": "True"},
            False,
        ),
    ],
)
async def test_mcp_param_headers_are_checked_against_the_arguments(
    engine: str, arguments: dict[str, Any], params: dict[str, str], ok: bool
) -> None:
    body = request(3, "tools/call", {"name": "routed", "arguments": arguments})
    async with serving(header_server(), engine) as port:
        reply = await post(
            port, body, {**stateless_headers("tools/call", body["params"]), **params}
        )
    checked(reply.messages, "tools/call")
    if ok:
        assert reply.status == 200
        assert "isError" not in reply.last["result"], reply.last
    else:
        assert (reply.status, reply.last["error"]["code"]) == (400, -32020)


async def test_closing_the_stream_cancels_the_request(engine: str) -> None:
    server = header_server()
    state = server.state  # type: ignore[attr-defined]
    async with serving(server, engine) as port:
        body = request(9, "tools/call", {"name": "hang"}, level="info")
        async with open_post(
            port, body, stateless_headers("tools/call", body["params"])
        ) as exchange:
            assert exchange.is_sse
            first = await exchange.next_message()
            assert first is not None
            assert first["method"] == "notifications/message"
            checked([first], "tools/call")
            assert state["started"].is_set()
        # The connection is closed: the handler's scope is cancelled, nothing is left.
        with trio.fail_after(10):
            await state["cancelled"].wait()
        await trio.testing.wait_all_tasks_blocked()
        assert not server.sessions
        assert (await call(port, 10, "tools/list")).status == 200


async def test_subscriptions_listen_over_http(engine: str) -> None:
    server = header_server()
    async with serving(server, engine) as port:
        body = request("sub", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with open_post(
            port, body, stateless_headers("subscriptions/listen", body["params"])
        ) as exchange:
            ack = await exchange.next_message()
            assert ack is not None
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert len(server.subscriptions) == 1
            server.tool(name="added")(_added)
            change = await exchange.next_message()
            assert change is not None
            assert change["method"] == "notifications/tools/list_changed"
            assert change["params"]["_meta"][SUB] == ack["params"]["_meta"][SUB] == "sub"
            checked([ack, change], "subscriptions/listen")
        # The stream is closed: the subscription's scope is cancelled and it is gone.
        with trio.fail_after(10):
            while len(server.subscriptions) or server.sessions:
                await trio.testing.wait_all_tasks_blocked(cushion=0.01)
        # A server that ends its subscriptions answers each with its result.
        body = request(
            "sub2", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
        )
        headers = stateless_headers("subscriptions/listen", body["params"])
        async with open_post(port, body, headers) as exchange:
            await exchange.next_message()
            server.subscriptions.end_all()
            rest = await exchange.rest()
        assert rest.last["result"] == {
            "resultType": "complete",
            "_meta": {
                SUB: "sub2",
                "io.modelcontextprotocol/serverInfo": {"name": "stateless-demo", "version": "2.0"},
            },
        }
        checked(rest.messages, "subscriptions/listen")


async def _added() -> str:
    return "added"


async def test_both_eras_on_one_endpoint_with_one_tool_body(engine: str) -> None:
    """A handshake-era session answers the elicitation live; a stateless client gets an
    input round for the same tool, on the same endpoint."""
    server = header_server()
    async with serving(server, engine) as port:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": ALL_CAPS,
                "clientInfo": {"name": "old", "version": "1"},
            },
        }
        opened = await post(port, init, {})
        session = opened.headers["mcp-session-id"]
        legacy = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(port, note, legacy)).status == 202
        call_body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet"}}
        async with open_post(port, call_body, legacy) as exchange:
            asked = await exchange.next_message()
            assert asked is not None
            assert asked["method"] == "elicitation/create"
            answer = {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"action": "accept", "content": {"name": "Old"}},
            }
            assert (await post(port, answer, legacy)).status == 202
            done = await exchange.rest()
        assert done.last["result"]["content"][0]["text"] == "Hello, Old!"
        # The stateless client, same endpoint, same tool body: an input round.
        first = await call(port, 3, "tools/call", {"name": "greet"})
        result = first.last["result"]
        ((key, _),) = result["inputRequests"].items()
        retry = {
            "name": "greet",
            "inputResponses": {key: {"action": "accept", "content": {"name": "New"}}},
            "requestState": result["requestState"],
        }
        second = await call(port, 4, "tools/call", retry)
        assert second.last["result"]["content"][0]["text"] == "Hello, New!"
        assert "mcp-session-id" not in second.headers
        checked(first.messages + second.messages, "tools/call")
        assert json.dumps(second.last).count("resultType") == 1


async def test_get_and_delete_of_the_stateless_era_are_405(engine: str) -> None:
    async with serving(header_server(), engine) as port:
        for method in ("GET", "DELETE"):
            for extra in ({}, {"mcp-session-id": "ignored"}):
                status, headers = await bodiless(
                    port, method, {"mcp-protocol-version": VERSION, **extra}
                )
                assert (status, headers.get("allow")) == (405, "POST")

"""The stateless era over Streamable HTTP on 127.0.0.1: trimcp's server and a fake one."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
import trio

import trimcp
from trimcp.wire import decode

from ..http_client._fake import Exchange, FakeRequest, mcp_app, result, start_server
from ._peer import DISCOVER, check_client_message

WAIT = 20
ANNOTATED = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "query": {"type": "string"},
    },
    "required": ["region", "query"],
}
INVALID = {
    "type": "object",
    "properties": {"score": {"type": "number", "x-mcp-header": "Score"}},
}


def build() -> trimcp.Server:
    server = trimcp.Server("http", version="1")

    @server.tool()
    async def ask(ctx: trimcp.ToolContext) -> str:
        _answer, content = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hi {content and content['name']}"

    return server


async def elicit(_ctx: trimcp.HandlerContext, _p: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"name": "Bo"})


async def test_auto_detects_trimcp_and_runs_mrtr_and_listen_over_http() -> None:
    server = build()
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(trimcp.serve_http, server, port=0))
            url = f"http://127.0.0.1:{port}/mcp"
            async with trimcp.open_client(
                trimcp.streamable_http(url), era="auto", elicitation=elicit
            ) as client:
                assert client.stateless
                channel = client.session.channel
                assert channel.session_id is None  # type: ignore[attr-defined]
                asked = await client.call_tool("ask")
                assert asked.content[0] == trimcp.TextContent(text="hi Bo")
                async with client.listen(tools=True) as sub:
                    assert sub.acknowledged == {"toolsListChanged": True}

                    @server.tool()
                    async def later() -> str:
                        return "later"

                    note = await sub.__anext__()
                    assert note.method == "notifications/tools/list_changed"
                assert (await client.call_tool("later")).content[0] == trimcp.TextContent(
                    text="later"
                )
                assert channel.sse.get_requests == 0  # type: ignore[attr-defined]
            nursery.cancel_scope.cancel()


def modern_app(calls: list[FakeRequest]) -> Any:
    async def discover(request: FakeRequest, ex: Exchange) -> None:
        await ex.json(result(request, DISCOVER))

    async def tools_list(request: FakeRequest, ex: Exchange) -> None:
        tools = [
            {"name": "route", "inputSchema": ANNOTATED},
            {"name": "bad", "inputSchema": INVALID},
            {"name": "plain", "inputSchema": {"type": "object"}},
        ]
        page = {"tools": tools, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
        await ex.json(result(request, page))

    async def tools_call(request: FakeRequest, ex: Exchange) -> None:
        calls.append(request)
        done = {"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}
        await ex.json(result(request, done))

    return mcp_app(
        {"server/discover": discover, "tools/list": tools_list, "tools/call": tools_call},
        session_id=None,
    )


async def test_stateless_requests_are_posts_with_metadata_and_param_headers() -> None:
    calls: list[FakeRequest] = []
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            fake = await start_server(nursery, modern_app(calls))
            async with trimcp.open_client(
                trimcp.streamable_http(fake.url), era="stateless"
            ) as client:
                tools = await client.list_all_tools()
                assert [tool.name for tool in tools] == ["route", "plain"]
                await client.call_tool("route", {"region": "Zürich", "priority": 3, "query": "q"})
                await client.call_tool("route", {"region": "eu-west", "query": "q"})
                await client.call_tool("plain", {"region": "x"})
            nursery.cancel_scope.cancel()
    assert {r.method for r in fake.requests} == {"POST"}
    for request in fake.requests:
        assert "mcp-session-id" not in request.headers
        assert request.headers["mcp-protocol-version"] == "2026-07-28"
        assert request.headers["mcp-method"] == request.rpc_method
        check_client_message(decode(request.body))  # type: ignore[arg-type]
    first, second, third = (c.headers for c in calls)
    assert first["mcp-name"] == "route"
    assert first["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
    assert first["mcp-param-priority"] == "3"
    assert "mcp-param-query" not in first
    assert second["mcp-param-region"] == "eu-west"
    assert "mcp-param-priority" not in second
    assert not any(name.startswith("mcp-param-") for name in third)


async def test_a_legacy_400_falls_back_and_a_modern_400_is_retried() -> None:
    async def legacy_discover(request: FakeRequest, ex: Exchange) -> None:
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no session"}}
        await ex.json(body, status=400)

    attempts: list[str] = []

    async def picky_discover(request: FakeRequest, ex: Exchange) -> None:
        attempts.append(request.headers["mcp-protocol-version"])
        if len(attempts) == 1:
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"},
            }
            body = {"jsonrpc": "2.0", "id": request.message["id"], "error": error}
            await ex.json(body, status=400)
        else:
            await ex.json(result(request, DISCOVER))

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            legacy = await start_server(nursery, mcp_app({"server/discover": legacy_discover}))
            async with trimcp.open_client(
                trimcp.streamable_http(legacy.url, listen=False), era="auto"
            ) as client:
                assert not client.stateless
                assert client.protocol_version == "2025-11-25"
            modern = await start_server(nursery, mcp_app({"server/discover": picky_discover}))
            async with trimcp.open_client(trimcp.streamable_http(modern.url), era="auto") as client:
                assert client.stateless
            nursery.cancel_scope.cancel()
    assert [r.rpc_method for r in legacy.of("POST")][:2] == ["server/discover", "initialize"]
    assert attempts == ["2026-07-28", "2026-07-28"]
    ids = [json.loads(r.body)["id"] for r in modern.of("POST", "server/discover")]
    assert len(set(ids)) == 2
    assert not modern.of("POST", "initialize")


async def test_a_header_mismatch_relists_the_tools_and_retries_once() -> None:
    listed: list[int] = []
    calls: list[FakeRequest] = []

    async def discover(request: FakeRequest, ex: Exchange) -> None:
        await ex.json(result(request, DISCOVER))

    async def tools_list(request: FakeRequest, ex: Exchange) -> None:
        listed.append(1)
        schema = {"type": "object"} if len(listed) == 1 else ANNOTATED  # the tool changed
        page = {"tools": [{"name": "route", "inputSchema": schema}], "resultType": "complete"}
        await ex.json(result(request, {**page, "ttlMs": 0, "cacheScope": "private"}))

    async def tools_call(request: FakeRequest, ex: Exchange) -> None:
        calls.append(request)
        if "mcp-param-region" not in request.headers:
            error = {"code": -32020, "message": "Header mismatch: Mcp-Param-Region missing"}
            body = {"jsonrpc": "2.0", "id": request.message["id"], "error": error}
            await ex.json(body, status=400)
            return
        done = {"content": [{"type": "text", "text": "routed"}], "resultType": "complete"}
        await ex.json(result(request, done))

    app = mcp_app(
        {"server/discover": discover, "tools/list": tools_list, "tools/call": tools_call},
        session_id=None,
    )
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            fake = await start_server(nursery, app)
            async with trimcp.open_client(
                trimcp.streamable_http(fake.url), era="stateless"
            ) as client:
                await client.list_all_tools()
                answer = await client.call_tool("route", {"region": "eu", "query": "q"})
                assert answer.content[0] == trimcp.TextContent(text="routed")
                assert len(calls) == 2
                assert calls[1].headers["mcp-param-region"] == "eu"
                # a second mismatch on one call is not retried forever
                listed.clear()
                with pytest.raises(trimcp.McpError) as caught:
                    await client.call_tool("route", {"query": "q"})
                assert caught.value.code == -32020
                assert len(calls) == 4
            nursery.cancel_scope.cancel()

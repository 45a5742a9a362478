"""The stateless era on one session: era per request, ``_meta`` checks, result shape.

Every message the server sends in these tests is validated against the 2026-07-28
schema (:class:`StatelessCheck`), and the tests assert which definitions were seen.
"""

from __future__ import annotations

from typing import Any

import pytest

import trimcp
from trimcp.nursery import HandlerContext
from trimcp.wire import Notification, Response

from ._support import ALL_CAPS, VERSION, demo_server, error_of, meta, params, result_of, served

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


async def test_discover_describes_the_server() -> None:
    server = demo_server(instructions="be nice")
    async with served(server) as (peer, checker):
        result = result_of(await peer.call(1, "server/discover", params()))
    assert VERSION in result["supportedVersions"]
    assert "2025-11-25" in result["supportedVersions"]  # both eras on one server
    assert set(result["capabilities"]) >= {"tools", "prompts", "resources"}
    assert result["instructions"] == "be nice"
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == {"name": "stateless-demo", "version": "2.0"}
    assert (result["ttlMs"], result["cacheScope"]) == (0, "public")
    assert checker.validate()["DiscoverResult"] == 1


@pytest.mark.parametrize(
    ("broken", "code"),
    [
        ({}, -32602),  # no _meta at all: not even recognisable, but discover is stateless-only
        ({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}, -32602),
        ({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}, -32602),
        ({"_meta": meta(capabilities=None) | {"io.modelcontextprotocol/clientInfo": 3}}, -32602),
        ({"_meta": meta() | {"io.modelcontextprotocol/logLevel": "loud"}}, -32602),
        ({"_meta": meta() | {"io.modelcontextprotocol/logLevel": ["info"]}}, -32602),
    ],
)
async def test_malformed_meta_is_invalid_params(broken: dict[str, Any], code: int) -> None:
    async with served(demo_server()) as (peer, checker):
        got, _ = error_of(await peer.call(7, "server/discover", broken))
    assert got == code
    assert checker.validate()["InvalidParamsError"] == 1


async def test_meta_checks_come_before_the_version_check() -> None:
    """A missing capabilities key is -32602 even when the version is unknown too."""
    broken = {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}
    async with served(demo_server()) as (peer, _):
        code, _ = error_of(await peer.call(1, "tools/list", broken))
    assert code == -32602


async def test_an_unsupported_version_lists_the_supported_ones() -> None:
    server = demo_server()
    async with served(server) as (peer, checker):
        code, data = error_of(await peer.call(1, "tools/list", params(version="2099-01-01")))
        # A handshake-era version in stateless _meta is not a stateless version either.
        old, old_data = error_of(await peer.call(2, "tools/list", params(version="2025-11-25")))
    assert code == old == -32022
    assert data == {"supported": [VERSION], "requested": "2099-01-01"}
    assert old_data["requested"] == "2025-11-25"
    assert checker.validate()["UnsupportedProtocolVersionError"] == 2


async def test_a_missing_capability_is_32021_with_the_capability() -> None:
    async with served(demo_server()) as (peer, checker):
        reply = await peer.call(
            1,
            "tools/call",
            params({"name": "ask_model", "arguments": {"question": "q"}}, capabilities={}),
        )
        roots = await peer.call(2, "tools/call", params({"name": "roots"}, capabilities={}))
    assert error_of(reply) == (-32021, {"requiredCapabilities": {"sampling": {}}})
    assert error_of(roots) == (-32021, {"requiredCapabilities": {"roots": {}}})
    assert checker.validate()["MissingRequiredClientCapabilityError"] == 2


async def test_each_request_is_judged_by_its_own_capabilities_and_info() -> None:
    """Requests alternating between capability sets and client infos each get their own
    (the server reuses what it structured last only for an equal ``_meta``)."""
    server = demo_server()
    seen: list[tuple[bool, str | None]] = []

    @server.tool()
    async def who(ctx: trimcp.ToolContext) -> str:
        state = ctx.session
        info = state.client_info
        seen.append((state.client_capabilities.sampling is not None, info and info.name))
        return "ok"

    async with served(server) as (peer, _checker):
        for n in range(4):
            with_sampling = n % 2 == 0
            caps = dict(ALL_CAPS) if with_sampling else {}
            extra = {"name": "who"}
            p = params(extra, capabilities=caps)
            p["_meta"]["io.modelcontextprotocol/clientInfo"] = {"name": f"c{n % 2}", "version": "1"}
            result_of(await peer.call(n, "tools/call", p))
        refused = await peer.call(
            9,
            "tools/call",
            params({"name": "ask_model", "arguments": {"question": "q"}}, capabilities={}),
        )
    assert seen == [(True, "c0"), (False, "c1"), (True, "c0"), (False, "c1")]
    assert error_of(refused)[0] == -32021


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"]
)
async def test_removed_and_unknown_methods_are_32601(method: str) -> None:
    async with served(demo_server()) as (peer, checker):
        code, _ = error_of(await peer.call("x", method, params({"uri": "demo://static"})))
    assert code == -32601
    assert checker.validate()["MethodNotFoundError"] == 1


async def test_every_result_has_result_type_and_server_info() -> None:
    server = demo_server()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "demo://static"}),
        ("tools/call", {"name": "chatty"}),
        ("prompts/get", {"name": "guided"}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "guided"},
                "argument": {"name": "x", "value": ""},
            },
        ),
    ]
    async with served(server) as (peer, checker):
        results = {
            method: result_of(await peer.call(n, method, params(body)))
            for n, (method, body) in enumerate(calls)
        }
    for method, result in results.items():
        assert "resultType" in result, method
        assert result["_meta"][SERVER_INFO]["name"] == "stateless-demo", method
    cacheable = {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
    for method in cacheable | {"resources/read"}:
        assert results[method]["ttlMs"] == 0
        assert results[method]["cacheScope"] == "public"
    for method in ("tools/call", "completion/complete"):
        assert "ttlMs" not in results[method]
        assert "cacheScope" not in results[method]
    assert results["prompts/get"]["resultType"] == "input_required"  # it asks first
    seen = checker.validate()
    for definition in (
        "ListToolsResult",
        "ReadResourceResult",
        "CallToolResult",
        "InputRequiredResult",
    ):
        assert seen[definition] == 1, (definition, seen)


async def test_cache_policy_per_method() -> None:
    policy = trimcp.CachePolicy(
        ttl_ms=5000, scope="private", per_method={"tools/list": (10, "public")}
    )
    async with served(demo_server(cache=policy)) as (peer, _):
        tools = result_of(await peer.call(1, "tools/list", params()))
        prompts = result_of(await peer.call(2, "prompts/list", params()))
    assert (tools["ttlMs"], tools["cacheScope"]) == (10, "public")
    assert (prompts["ttlMs"], prompts["cacheScope"]) == (5000, "private")
    with pytest.raises(ValueError, match="bad cache hint"):
        trimcp.CachePolicy(ttl_ms=-1)


async def test_tools_list_order_is_deterministic() -> None:
    server = demo_server()
    async with served(server) as (peer, _):
        first = result_of(await peer.call(1, "tools/list", params()))
        second = result_of(await peer.call(2, "tools/list", params()))
    names = [tool["name"] for tool in first["tools"]]
    assert names == [tool["name"] for tool in second["tools"]]
    assert names == ["greet", "ask_model", "roots", "all_at_once", "two_steps", "chatty"]


async def test_resource_not_found_is_invalid_params() -> None:
    async with served(demo_server()) as (peer, checker):
        code, _ = error_of(await peer.call(1, "resources/read", params({"uri": "demo://nope"})))
    assert code == -32602
    checker.validate()


async def test_logs_only_when_the_request_asks_for_a_level() -> None:
    async with served(demo_server()) as (peer, checker):
        await peer.call(1, "tools/call", params({"name": "chatty"}))
        assert peer.notes == []
        await peer.call(2, "tools/call", params({"name": "chatty"}, level="info"))
        await peer.call(3, "tools/call", params({"name": "chatty"}, level="error"))
    assert [n.method for n in peer.notes] == ["notifications/message"]
    assert checker.validate()["LoggingMessageNotification"] == 1


async def test_both_eras_on_one_session() -> None:
    """A handshake-era client and stateless requests share one channel (stdio-like):
    each request is served in the era its own ``_meta`` names."""
    server = demo_server()
    async with served(server) as (peer, _):
        # Stateless first: no initialize needed.
        stateless = result_of(await peer.call(1, "tools/list", params()))
        # Handshake-era requests before initialize are refused by that era's rules.
        early = await peer.call(2, "tools/list", {})
        init = result_of(
            await peer.call(
                3,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": ALL_CAPS,
                    "clientInfo": {"name": "c", "version": "1"},
                },
            )
        )
        await peer.send(Notification(method="notifications/initialized"))
        handshake = result_of(await peer.call(4, "tools/list", {}))
        again = result_of(await peer.call(5, "tools/list", params()))
        pong = await peer.call(6, "ping", None)
    assert init["protocolVersion"] == "2025-11-25"
    assert stateless["resultType"] == again["resultType"] == "complete"
    assert "resultType" not in handshake
    assert "ttlMs" not in handshake
    assert [t["name"] for t in handshake["tools"]] == [t["name"] for t in stateless["tools"]]
    assert error_of(early)[0] != 0
    assert isinstance(pong, Response)


async def test_no_request_is_ever_sent_in_the_stateless_era() -> None:
    """A handler outside tools/call, prompts/get and resources/read that asks for input
    fails (-32603) instead of sending the client a request."""
    server = demo_server()

    async def ask(ctx: HandlerContext, _params: Any) -> dict[str, Any]:
        await trimcp.ToolContext(ctx).elicit("?", {"type": "object", "properties": {}})
        return {}

    server.registry.add_request("custom/ask", server.era.wrap("custom/ask", ask, None))
    async with served(server) as (peer, checker):
        reply = await peer.call(1, "custom/ask", params())
    assert error_of(reply)[0] == -32603
    assert "cannot ask the client for input" in reply.error.message  # type: ignore[union-attr]
    checker.validate()  # and it asserts that no request was sent


async def test_trace_context_reaches_the_handler_in_both_eras() -> None:
    server = demo_server()

    @server.tool()
    async def traced(ctx: trimcp.ToolContext) -> str:
        """Returns its trace context."""
        return ",".join(f"{k}={v}" for k, v in sorted(ctx.trace.items()))

    trace = {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "baggage": "a=1",
    }
    body = params({"name": "traced"})
    body["_meta"].update(trace, tracestate=7)  # a non-string member is left out
    async with served(server) as (peer, checker):
        text = result_of(await peer.call(1, "tools/call", body))["content"][0]["text"]
    assert text == f"baggage=a=1,traceparent={trace['traceparent']}"
    checker.validate()


async def test_a_handshake_only_server_behaves_like_an_older_one() -> None:
    """Without a stateless version, server/discover is unknown and stateless _meta is
    ignored: the request follows the handshake-era lifecycle (not initialized)."""
    server = demo_server(supported_versions=("2025-06-18", "2025-11-25"))
    async with served(server) as (peer, _):
        discover = await peer.call(1, "server/discover", params())
        listing = await peer.call(2, "tools/list", params())
    assert error_of(discover)[0] == -32601
    assert error_of(listing)[0] != -32022

"""How failures become JSON-RPC errors (or tool results), and that sessions survive them."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio

from trimcp import McpError, Server, ToolContext, ToolError, open_client
from trimcp.dispatch import Registry
from trimcp.nursery import HandlerContext
from trimcp.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    NO_DATA,
    ErrorResponse,
    Notification,
    Request,
    Response,
    encode,
)

from ._schema_check import SchemaCheck
from ._support import raw_session, served

SECRET = "sk-live-7f3a9c-hunter2"


def _failing_registry() -> Registry:
    registry = Registry()

    async def boom(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        raise RuntimeError(f"database password is {SECRET}")

    async def refuse(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        raise McpError(-32042, "Refused on purpose", {"why": "policy"})

    async def bare(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        raise McpError(-32043, "No data here")

    async def ok(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return {"fine": True}

    for name, handler in (("boom", boom), ("refuse", refuse), ("bare", bare), ("ok", ok)):
        registry.add_request(name, handler)
    return registry


async def test_an_arbitrary_exception_is_an_internal_error_without_detail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        async with raw_session(_failing_registry()) as (peer, session):
            reply = await peer.request(1, "boom")
            assert isinstance(reply, ErrorResponse)
            assert reply.error.code == INTERNAL_ERROR
            assert reply.error.message == "Internal error"
            assert reply.error.data is NO_DATA
            wire = encode(reply).decode()
            assert SECRET not in wire
            assert "Traceback" not in wire
            assert "RuntimeError" not in wire
            # The session keeps working.
            assert await peer.request(2, "ok") == Response(id=2, result={"fine": True})
            assert session.in_flight == 0
    (record,) = [r for r in caplog.records if r.exc_info]
    assert record.levelno == logging.ERROR
    assert "boom" in record.getMessage()
    assert SECRET in str(record.exc_info[1])  # type: ignore[index]


async def test_mcp_error_goes_out_exactly_as_raised() -> None:
    async with raw_session(_failing_registry()) as (peer, _session):
        reply = await peer.request(1, "refuse")
        assert isinstance(reply, ErrorResponse)
        assert (reply.error.code, reply.error.message, reply.error.data) == (
            -32042,
            "Refused on purpose",
            {"why": "policy"},
        )
        bare = await peer.request(2, "bare")
        assert isinstance(bare, ErrorResponse)
        assert (bare.error.code, bare.error.message, bare.error.data) == (
            -32043,
            "No data here",
            NO_DATA,
        )


async def test_a_caller_receives_the_peer_error_as_mcp_error() -> None:
    server = Server("s")

    @server.tool()
    async def t() -> str:
        return "x"

    async with open_client(server.in_memory(), era="handshake") as client:
        with pytest.raises(McpError) as info:
            await client.request("no/such/method")
        assert info.value.code == METHOD_NOT_FOUND
        assert info.value.message == "Method not found: no/such/method"


async def test_unknown_method_is_method_not_found() -> None:
    async with raw_session(Registry()) as (peer, _session):
        reply = await peer.request("x", "frobnicate", {"a": 1})
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == METHOD_NOT_FOUND
        assert "frobnicate" in reply.error.message


async def test_unknown_notification_is_ignored() -> None:
    async with raw_session(_failing_registry()) as (peer, _session):
        await peer.send(Notification(method="notifications/whatever", params={"x": 1}))
        await peer.send(Notification(method="totally/unknown"))
        assert await peer.quiet_drain() == []
        assert await peer.request(1, "ok") == Response(id=1, result={"fine": True})


async def test_a_failing_notification_handler_is_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = _failing_registry()

    async def bad(session: Any, params: Any) -> None:
        raise ValueError("handler bug")

    registry.add_notification("notifications/bad", bad)
    with caplog.at_level(logging.ERROR):
        async with raw_session(registry) as (peer, _session):
            await peer.send(Notification(method="notifications/bad"))
            assert await peer.quiet_drain() == []
            assert await peer.request(1, "ok") == Response(id=1, result={"fine": True})
    assert any("notifications/bad" in r.getMessage() for r in caplog.records)


async def test_initialize_without_params_is_invalid_params_with_paths() -> None:
    async with served(Server("s"), initialize=False) as (peer, session):
        reply = await peer.request(1, "initialize", None)
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == INVALID_PARAMS
        errors = reply.error.data["errors"]
        assert any(e.endswith("@ $.params.protocolVersion") for e in errors)
        assert any(e.endswith("@ $.params.clientInfo") for e in errors)
        assert not session.state.initialized
        # A correct initialize afterwards still works.
        assert (await peer.initialize()).result["protocolVersion"] == "2025-11-25"


async def test_set_level_with_a_bad_level_is_invalid_params() -> None:
    server = Server("s")
    check = SchemaCheck().install(server.middlewares)
    async with served(server) as (peer, session):
        reply = await peer.request(1, "logging/setLevel", {"level": "loud"})
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == INVALID_PARAMS
        (error,) = reply.error.data["errors"]
        assert error.endswith("@ $.params.level")
        assert session.state.log_level is None
        assert await peer.request(2, "logging/setLevel", {"level": "error"}) == Response(
            id=2, result={}
        )
        assert session.state.log_level == "error"
    seen = check.validate("2025-11-25")
    assert seen["JSONRPCErrorResponse"] == 1
    assert seen["EmptyResult"] == 1


def _tool_server() -> Server:
    server = Server("s")

    @server.tool()
    async def add(a: int, b: int = 1) -> int:
        return a + b

    @server.tool()
    async def explode(ctx: ToolContext) -> str:
        raise RuntimeError(f"token {SECRET}")

    @server.tool()
    async def refuse() -> str:
        raise ToolError("the quota is used up")

    return server


async def test_tool_failures_are_error_results(caplog: pytest.LogCaptureFixture) -> None:
    server = _tool_server()
    check = SchemaCheck().install(server.middlewares)
    with caplog.at_level(logging.ERROR):
        async with open_client(server.in_memory(), era="handshake") as client:
            invalid = await client.call_tool("add", {"a": "not a number"})
            assert invalid.is_error
            assert "$.arguments.a" in invalid.content[0].text  # type: ignore[union-attr]
            missing = await client.call_tool("add", {})
            assert missing.is_error
            assert "required field missing @ $.arguments.a" in missing.content[0].text  # type: ignore[union-attr]
            raised = await client.call_tool("explode")
            assert raised.is_error
            assert raised.content[0].text == "Tool explode failed"  # type: ignore[union-attr]
            refused = await client.call_tool("refuse")
            assert refused.is_error
            assert refused.content[0].text == "the quota is used up"  # type: ignore[union-attr]
            fine = await client.call_tool("add", {"a": 2})
            assert not fine.is_error
            assert fine.structured_content == {"result": 3}
    assert any(SECRET in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
    assert all(SECRET not in encode(m).decode() for m, _ in check.sent)
    assert check.validate("2025-11-25")["CallToolResult"] == 5


async def test_unknown_tool_and_malformed_call_are_invalid_params() -> None:
    async with served(_tool_server()) as (peer, _session):
        unknown = await peer.request(1, "tools/call", {"name": "nope"})
        assert isinstance(unknown, ErrorResponse)
        assert unknown.error.code == INVALID_PARAMS
        assert unknown.error.message == "Unknown tool: nope"
        for i, params in enumerate(({}, {"name": 5}, None), start=2):
            reply = await peer.request(i, "tools/call", params)
            assert isinstance(reply, ErrorResponse)
            assert reply.error.code == INVALID_PARAMS


async def test_client_sees_unknown_tool_as_mcp_error() -> None:
    async with open_client(_tool_server().in_memory(), era="handshake") as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("nope")
        assert info.value.code == INVALID_PARAMS
        await client.ping()  # still connected


async def test_a_request_that_passes_no_params_to_a_typed_method_fails_cleanly() -> None:
    async with served(Server("s")) as (peer, _session):
        await peer.send(Request(id=1, method="logging/setLevel"))
        reply = await peer.receive()
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == INVALID_PARAMS
        assert reply.error.data["errors"] == ["required field missing @ $.params.level"]


def _nursery_server() -> Server:
    """Tools and a prompt whose errors are raised in child tasks of their own nursery."""
    server = Server("s")

    async def raises(exc: Exception) -> None:
        raise exc

    async def parked() -> None:
        await trio.sleep_forever()

    @server.tool()
    async def tool_error_in_child() -> str:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(parked)  # cancelled by the failure: rides along
            nursery.start_soon(raises, ToolError("the child says no"))
        return "unreachable"

    @server.tool()
    async def mcp_error_nested() -> str:
        async with trio.open_nursery() as outer:

            async def inner() -> None:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(raises, McpError(-32042, "Refused in a grandchild"))

            outer.start_soon(inner)
        return "unreachable"

    @server.tool()
    async def two_failures() -> str:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raises, ToolError("one"))
            nursery.start_soon(raises, ToolError("two"))
        return "unreachable"

    @server.prompt()
    async def refusing_prompt() -> str:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raises, McpError(INVALID_PARAMS, "Bad prompt input"))
        return "unreachable"

    return server


async def test_a_single_error_from_a_handlers_own_nursery_is_answered_as_itself() -> None:
    async with open_client(_nursery_server().in_memory(), era="handshake") as client:
        result = await client.call_tool("tool_error_in_child")
        assert result.is_error
        assert result.content[0].text == "the child says no"  # type: ignore[union-attr]
        with pytest.raises(McpError) as info:
            await client.call_tool("mcp_error_nested")
        assert (info.value.code, info.value.message) == (-32042, "Refused in a grandchild")
        with pytest.raises(McpError) as info:
            await client.get_prompt("refusing_prompt")
        assert (info.value.code, info.value.message) == (INVALID_PARAMS, "Bad prompt input")
        # several real errors are no single story: the generic failure, details logged
        both = await client.call_tool("two_failures")
        assert both.is_error
        assert both.content[0].text == "Tool two_failures failed"  # type: ignore[union-attr]


async def test_a_raw_handler_nursery_error_keeps_its_code() -> None:
    registry = Registry()

    async def fails(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        async def child() -> None:
            raise McpError(-32043, "From a child")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(child)
        return {}

    registry.add_request("fails", fails)
    async with raw_session(registry) as (peer, _session):
        reply = await peer.request(1, "fails")
        assert isinstance(reply, ErrorResponse)
        assert (reply.error.code, reply.error.message) == (-32043, "From a child")

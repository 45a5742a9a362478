"""The peer going away, closing sessions, version negotiation, phases, ping, capabilities."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trimcp import McpError, Server, ToolContext, open_client
from trimcp.dispatch import ConnectionClosedError, Middlewares, Registry
from trimcp.nursery import HandlerContext
from trimcp.protocol import HANDSHAKE_VERSIONS
from trimcp.wire import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    ErrorResponse,
    Message,
    Notification,
    Request,
    Response,
)

from ._schema_check import SchemaCheck
from ._support import (
    assert_session_clean,
    init_params,
    no_leaked_tasks,
    raw_session,
    served,
    server_session,
)

# ---------------------------------------------------------------- the peer goes away


async def test_peer_going_away_fails_every_pending_call_at_once(autojump_clock: Any) -> None:
    registry = Registry()
    outcomes: list[BaseException] = []
    cancelled: list[Any] = []

    scopes: list[trio.CancelScope] = []

    async def forward(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        scopes.append(ctx.cancel_scope)
        try:
            return await ctx.request("sampling/createMessage", {})
        except ConnectionClosedError as exc:
            outcomes.append(exc)
            raise

    async def sleep(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        scopes.append(ctx.cancel_scope)
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(ctx.request_id)
            raise
        return {}

    registry.add_request("forward", forward)
    registry.add_request("sleep", sleep)
    async with no_leaked_tasks(), raw_session(registry) as (peer, session):
        await peer.send(Request(id=1, method="forward"))
        reverse = await peer.receive()
        assert isinstance(reverse, Request)
        await peer.send(Request(id=2, method="sleep"))

        async def call(method: str) -> None:
            try:
                await session.request(method)
            except ConnectionClosedError as exc:
                outcomes.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "ping")
            nursery.start_soon(call, "roots/list")
            await peer.settle()
            assert session.pending == 3
            assert session.in_flight == 2
            start = trio.current_time()
            await peer.close()
        assert trio.current_time() == start  # at once, not after a timeout
        # Two callers of the session and the reverse call inside the handler.
        assert len(outcomes) == 3
        assert all(isinstance(e, ConnectionClosedError) for e in outcomes)
        await peer.settle()
        assert cancelled == [2]  # the in-flight handler was cancelled
        assert all(scope.cancel_called for scope in scopes)
        await session.wait_closed()
        assert session.is_closed
        assert_session_clean(session)


async def test_client_calls_fail_with_connection_closed_when_the_server_goes_away() -> None:
    from ._support import RawServerTransport

    transport = RawServerTransport()
    with trio.fail_after(30):
        async with no_leaked_tasks(), trio.open_nursery() as nursery:
            nursery.start_soon(transport.answer_initialize)
            async with open_client(transport, era="handshake") as client:
                errors: list[BaseException] = []

                async def call() -> None:
                    with pytest.raises(ConnectionClosedError) as info:
                        await client.call_tool("x", {})
                    errors.append(info.value)

                async with trio.open_nursery() as inner:
                    inner.start_soon(call)
                    inner.start_soon(call)
                    request = await transport.peer.receive()
                    assert isinstance(request, Request)
                    assert request.method == "tools/call"
                    await transport.peer.receive()
                    await transport.peer.close()
                assert len(errors) == 2
                with pytest.raises(ConnectionClosedError):
                    await client.ping()
                assert client.session.pending == 0


async def test_closing_a_session_cancels_everything_and_leaves_no_task() -> None:
    server = Server("s")
    cancelled: list[str] = []

    @server.tool()
    async def hang(ctx: ToolContext) -> str:
        async def forever(bg: Any) -> None:
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                cancelled.append("background")
                raise

        ctx.detach_for_background(forever)
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append("handler")
            raise
        return "never"

    async with no_leaked_tasks(), served(server) as (peer, session):
        await peer.send(Request(id=1, method="tools/call", params={"name": "hang"}))
        await peer.settle()
        assert session.in_flight == 1
        assert session.background_tasks == 1
        session.close()
        await session.wait_closed()
        await peer.settle()
        assert sorted(cancelled) == ["background", "handler"]
        assert_session_clean(session)
        assert server.sessions == frozenset()


# ---------------------------------------------------------------- version negotiation


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_each_handshake_revision_is_negotiated(version: str) -> None:
    server = Server("s")
    check = SchemaCheck().install(server.middlewares)

    @server.tool()
    async def which(ctx: ToolContext) -> str:
        return ctx.session.protocol_version or "none"

    async with open_client(server.in_memory(), protocol_version=version, era="handshake") as client:
        assert client.protocol_version == version
        assert server_session(server).state.protocol_version == version
        result = await client.call_tool("which")
        assert result.content[0].text == version  # type: ignore[union-attr]
    seen = check.validate(version)
    assert seen["InitializeResult"] == 1
    assert seen["CallToolResult"] == 1


async def test_an_unknown_version_is_answered_with_the_latest() -> None:
    async with served(Server("s"), initialize=False) as (peer, session):
        reply = await peer.request(0, "initialize", init_params("1999-01-01"))
        assert isinstance(reply, Response)
        assert reply.result["protocolVersion"] == "2025-11-25"
        assert session.state.protocol_version == "2025-11-25"


# ---------------------------------------------------------------- phases


async def test_requests_before_initialize_are_rejected_except_ping() -> None:
    server = Server("s")

    @server.tool()
    async def t() -> str:
        return "x"

    async with served(server, initialize=False) as (peer, _session):
        for i, method in enumerate(("tools/list", "tools/call", "logging/setLevel")):
            params = {"name": "t"} if method == "tools/call" else None
            if method == "logging/setLevel":
                params = {"level": "info"}
            reply = await peer.request(i, method, params)
            assert isinstance(reply, ErrorResponse), reply
            assert reply.error.code == INVALID_REQUEST
            assert "not initialized" in reply.error.message
        assert await peer.request("p", "ping") == Response(id="p", result={})
        init = await peer.initialize()
        assert init.result["protocolVersion"] == "2025-11-25"
        listed = await peer.request(10, "tools/list")
        assert isinstance(listed, Response)
        assert [t["name"] for t in listed.result["tools"]] == ["t"]


async def test_a_second_initialize_is_rejected_and_the_first_is_kept() -> None:
    async with served(Server("s"), capabilities={"roots": {}}) as (peer, session):
        second = init_params("2024-11-05", {"sampling": {}})
        second["clientInfo"] = {"name": "impostor", "version": "9"}
        reply = await peer.request(1, "initialize", second)
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == INVALID_REQUEST
        assert "already initialized" in reply.error.message
        state = session.state
        assert state.client_info is not None
        assert state.client_info.name == "raw-peer"
        assert state.protocol_version == "2025-11-25"
        assert state.client_capabilities.roots is not None
        assert state.client_capabilities.sampling is None


# ---------------------------------------------------------------- ping


async def test_ping_in_both_directions() -> None:
    server = Server("s")
    seen: list[Message] = []
    middlewares = Middlewares()

    async def record(message: Message, call_next: Any) -> None:
        seen.append(message)
        await call_next(message)

    middlewares.client_recv.add(record)
    async with open_client(server.in_memory(), middlewares=middlewares, era="handshake") as client:
        await client.ping()
        assert isinstance(seen[-1], Response)
        assert seen[-1].result == {}
        answer = await server_session(server).request("ping")
        assert answer == {}
        assert any(isinstance(m, Request) and m.method == "ping" for m in seen)


# ---------------------------------------------------------------- capabilities


async def test_a_server_without_tools_answers_tools_list_with_method_not_found() -> None:
    async with served(Server("bare")) as (peer, session):
        assert session.state.server_capabilities.tools is None
        for i, method in enumerate(("tools/list", "tools/call")):
            reply = await peer.request(i, method, {"name": "x"})
            assert isinstance(reply, ErrorResponse), reply
            if method == "tools/list":
                assert reply.error.code == METHOD_NOT_FOUND


async def test_a_client_without_sampling_answers_method_not_found() -> None:
    server = Server("s")
    async with open_client(server.in_memory(), era="handshake") as client:
        assert client.state.client_capabilities.sampling is None
        session = server_session(server)
        for method in ("sampling/createMessage", "elicitation/create", "roots/list"):
            with pytest.raises(McpError) as info:
                await session.request(method, {"messages": [], "maxTokens": 1})
            assert info.value.code == METHOD_NOT_FOUND


async def test_call_tool_against_a_server_without_tools_fails_locally() -> None:
    sent: list[Message] = []
    middlewares = Middlewares()

    async def record(message: Message, call_next: Any) -> None:
        sent.append(message)
        await call_next(message)

    middlewares.client_send.add(record)
    async with open_client(
        Server("bare").in_memory(), middlewares=middlewares, era="handshake"
    ) as client:
        before = len(sent)
        with pytest.raises(McpError) as info:
            await client.call_tool("anything", {})
        assert info.value.code == METHOD_NOT_FOUND
        with pytest.raises(McpError):
            await client.list_tools()
        assert len(sent) == before  # nothing went out
        assert not any(isinstance(m, Request) and m.method.startswith("tools/") for m in sent)


async def test_initialized_notification_marks_the_session_ready() -> None:
    async with served(Server("s"), initialize=False) as (peer, session):
        await peer.request(0, "initialize", init_params())
        assert session.state.initialized
        assert not session.state.ready
        await peer.send(Notification(method="notifications/initialized"))
        await peer.settle()
        assert session.state.ready


async def test_the_leak_check_sees_a_leaked_task() -> None:
    # The leak check the other tests rely on really notices a task that outlives its block.
    async with trio.open_nursery() as nursery:
        with pytest.raises(AssertionError):
            async with no_leaked_tasks():
                nursery.start_soon(trio.sleep_forever)
        nursery.cancel_scope.cancel()


async def test_leaving_a_session_tells_the_peer_about_abandoned_reverse_calls() -> None:
    # The transport is still up when this side leaves the session, so each reverse call
    # that was written and is now abandoned is followed by notifications/cancelled.
    registry = Registry()

    async def forward(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ctx.request, "roots/list")
            nursery.start_soon(ctx.request, "roots/list")
        return {}

    registry.add_request("forward", forward)
    async with raw_session(registry) as (peer, session):
        await peer.send(Request(id="f", method="forward"))
        reverse = [await peer.receive(), await peer.receive()]
        assert session.pending == 2
    rest = peer.drain()  # what the session sent before it closed its channel
    assert sorted(m.params["requestId"] for m in rest) == sorted(r.id for r in reverse)  # type: ignore[union-attr, index]
    assert all(isinstance(m, Notification) and m.method == "notifications/cancelled" for m in rest)
    with pytest.raises(trio.EndOfChannel):
        await peer.receive_channel.receive()

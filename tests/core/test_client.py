"""The client side of the engine: cancelling calls, its handlers, logging, teardown."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio

from trimcp import (
    CreateMessageParams,
    CreateMessageResult,
    McpError,
    Server,
    SessionLimits,
    ToolContext,
    open_client,
)
from trimcp.dispatch import CallNext, Middlewares
from trimcp.nursery import HandlerContext
from trimcp.protocol import LoggingMessageParams
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS, Message, Notification, Request, Response

from ._support import (
    WAIT,
    RawServerTransport,
    assert_session_clean,
    no_leaked_tasks,
    server_session,
)


async def test_cancelling_a_call_tells_the_server_and_gets_no_answer() -> None:
    server = Server("s")
    started = trio.Event()
    outcome: list[str] = []
    sent: list[Message] = []
    middlewares = Middlewares()

    @middlewares.client_send.add
    async def record(message: Message, call_next: CallNext) -> None:
        sent.append(message)
        await call_next(message)

    @server.tool()
    async def hang(ctx: ToolContext) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            outcome.append("cancelled")
            raise
        return "never"

    async with (
        no_leaked_tasks(),
        open_client(server.in_memory(), middlewares=middlewares, era="handshake") as c,
    ):
        async with trio.open_nursery() as nursery:

            async def call() -> None:
                await c.call_tool("hang")

            nursery.start_soon(call)
            with trio.fail_after(WAIT):
                await started.wait()
            nursery.cancel_scope.cancel()
        (request,) = [m for m in sent if isinstance(m, Request) and m.method == "tools/call"]
        assert sent[-1] == Notification(
            method="notifications/cancelled", params={"requestId": request.id}
        )
        await trio.testing.wait_all_tasks_blocked()
        assert outcome == ["cancelled"]
        assert c.session.pending == 0
        assert c.session.dropped_answers == 0  # the server sent no answer
        assert_session_clean(server_session(server))
        await c.ping()


async def test_a_failing_client_handler_is_an_internal_error_for_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("s")

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        try:
            await ctx.sample("q", max_tokens=1)
        except McpError as exc:
            return f"{exc.code} {exc.message}"
        return "no error"

    async def broken(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        raise RuntimeError("client secret 42")

    with caplog.at_level(logging.ERROR):
        async with open_client(server.in_memory(), sampling=broken, era="handshake") as client:
            result = await client.call_tool("ask")
    assert result.content[0].text == f"{INTERNAL_ERROR} Internal error"  # type: ignore[union-attr]
    assert any("client secret 42" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


async def test_set_logging_level_filters_what_the_server_sends() -> None:
    server = Server("s")
    logs: list[LoggingMessageParams] = []

    @server.tool()
    async def chatter(ctx: ToolContext) -> str:
        for level in ("debug", "info", "warning", "error", "critical"):
            await ctx.log(level, level)
        return "ok"

    async def on_log(params: LoggingMessageParams) -> None:
        logs.append(params)

    async with open_client(server.in_memory(), on_log=on_log, era="handshake") as client:
        await client.call_tool("chatter")
        await trio.testing.wait_all_tasks_blocked()
        assert [p.data for p in logs] == ["debug", "info", "warning", "error", "critical"]
        logs.clear()
        await client.set_logging_level("error")
        await client.call_tool("chatter")
        await trio.testing.wait_all_tasks_blocked()
        assert [p.data for p in logs] == ["error", "critical"]


async def test_a_server_choosing_an_unknown_version_is_refused() -> None:
    transport = RawServerTransport()
    async with trio.open_nursery() as nursery:

        async def answer() -> None:
            request = await transport.peer.receive()
            assert isinstance(request, Request)
            await transport.peer.send(
                Response(
                    id=request.id,
                    result={
                        "protocolVersion": "1999-01-01",
                        "capabilities": {},
                        "serverInfo": {"name": "old", "version": "0"},
                    },
                )
            )

        nursery.start_soon(answer)
        with pytest.raises(McpError) as info:
            async with open_client(transport, era="handshake"):
                raise AssertionError("must not get here")
        assert info.value.code == INVALID_PARAMS
        assert "1999-01-01" in info.value.message


async def test_initialize_request_carries_the_client_capabilities() -> None:
    transport = RawServerTransport()

    async def sample(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        raise AssertionError("not called")

    async with trio.open_nursery() as nursery:
        requests: list[Request] = []

        async def answer() -> None:
            requests.append(await transport.answer_initialize("2025-03-26"))

        nursery.start_soon(answer)
        async with open_client(
            transport,
            name="me",
            version="3",
            protocol_version="2025-06-18",
            sampling=sample,
            era="handshake",
        ) as client:
            assert client.protocol_version == "2025-03-26"  # the server's choice wins
            assert client.server_info is not None
            assert client.server_info.name == "raw-server"
    (init,) = requests
    assert init.params is not None
    assert init.params["protocolVersion"] == "2025-06-18"
    assert init.params["clientInfo"] == {"name": "me", "version": "3"}
    assert "sampling" in init.params["capabilities"]
    assert "elicitation" not in init.params["capabilities"]


async def test_client_limits_apply_to_its_calls(autojump_clock: Any) -> None:
    server = Server("s")

    @server.tool()
    async def hang(ctx: ToolContext) -> str:
        await trio.sleep_forever()
        return "never"

    async with open_client(
        server.in_memory(), limits=SessionLimits(request_timeout=3), era="handshake"
    ) as c:
        start = trio.current_time()
        with pytest.raises(McpError) as info:
            await c.call_tool("hang")
        assert info.value.code == -32001
        assert trio.current_time() - start == pytest.approx(3)
        await trio.testing.wait_all_tasks_blocked()
        assert server_session(server).in_flight == 0  # the cancel reached the server


async def test_leaving_open_client_closes_both_sessions() -> None:
    server = Server("s")

    @server.tool()
    async def t() -> str:
        return "x"

    async with no_leaked_tasks():
        async with open_client(server.in_memory(), era="handshake") as client:
            await client.call_tool("t")
            server_side = server_session(server)
        assert client.session.is_closed
        assert server_side.is_closed
        assert server.sessions == frozenset()
        assert_session_clean(client.session)
        assert_session_clean(server_side)

"""detach_for_background: work that outlives its request and ends with the session."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio
import trio.lowlevel

from trimcp import BackgroundContext, ContextClosedError, Server, ToolContext, open_client
from trimcp.dispatch import Middlewares
from trimcp.protocol import LoggingMessageParams
from trimcp.wire import Message, Notification, Response

from ._support import WAIT, assert_session_clean, no_leaked_tasks, server_session


async def test_detached_work_keeps_running_after_the_response() -> None:
    server = Server("s")
    go = trio.Event()
    progress: list[str] = []
    order: list[str] = []
    middlewares = Middlewares()

    async def record(message: Message, call_next: Any) -> None:
        if isinstance(message, Response) and "content" in message.result:
            order.append("response")
        await call_next(message)

    middlewares.client_recv.add(record)

    async def work(bg: BackgroundContext, label: str) -> None:
        progress.append(f"{label} started")
        await go.wait()
        progress.append(f"{label} finished")
        order.append("background finished")

    @server.tool()
    async def kick(ctx: ToolContext) -> str:
        ctx.detach_for_background(work, "job")
        return "accepted"

    async with open_client(server.in_memory(), middlewares=middlewares, era="handshake") as client:
        result = await client.call_tool("kick")
        assert result.content[0].text == "accepted"  # type: ignore[union-attr]
        session = server_session(server)
        assert session.in_flight == 0  # the request is over ...
        assert session.background_tasks == 1  # ... its work is not
        assert progress == ["job started"]
        go.set()
        with trio.fail_after(WAIT):
            while session.background_tasks:
                await trio.lowlevel.checkpoint()
        assert progress == ["job started", "job finished"]
        assert order == ["response", "background finished"]
        assert_session_clean(session)


async def test_detached_work_can_still_notify_the_client() -> None:
    server = Server("s")
    go = trio.Event()
    logs: list[LoggingMessageParams] = []
    got_log = trio.Event()
    kept: list[ToolContext] = []

    async def work(bg: BackgroundContext) -> None:
        await go.wait()
        with pytest.raises(ContextClosedError):
            await kept[0].log("info", "through the dead request")
        assert bg.session.protocol_version == "2025-11-25"
        await bg.notify("notifications/message", {"level": "info", "data": "later"})

    @server.tool()
    async def kick(ctx: ToolContext) -> str:
        kept.append(ctx)
        ctx.detach_for_background(work)
        return "accepted"

    async def on_log(params: LoggingMessageParams) -> None:
        logs.append(params)
        got_log.set()

    async with open_client(server.in_memory(), on_log=on_log, era="handshake") as client:
        await client.call_tool("kick")
        assert logs == []
        go.set()
        with trio.fail_after(WAIT):
            await got_log.wait()
        assert [(p.level.value, p.data) for p in logs] == [("info", "later")]


async def test_detached_work_is_cancelled_when_the_session_closes() -> None:
    server = Server("s")
    outcome: list[str] = []
    origin: list[Any] = []

    async def forever(bg: BackgroundContext) -> None:
        origin.append(bg.origin_request_id)
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            outcome.append("cancelled")
            raise

    @server.tool()
    async def kick(ctx: ToolContext) -> str:
        ctx.detach_for_background(forever)
        return "accepted"

    async with no_leaked_tasks():
        async with open_client(server.in_memory(), era="handshake") as client:
            await client.call_tool("kick")
            session = server_session(server)
            assert session.background_tasks == 1
            assert outcome == []
        assert outcome == ["cancelled"]
        assert session.is_closed
        assert_session_clean(session)
        assert isinstance(origin[0], int)


async def test_a_failing_detached_task_is_logged_and_the_session_lives_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("s")

    async def boom(bg: BackgroundContext) -> None:
        raise RuntimeError("detached failure")

    @server.tool()
    async def kick(ctx: ToolContext) -> str:
        ctx.detach_for_background(boom)
        return "accepted"

    with caplog.at_level(logging.ERROR):
        async with open_client(server.in_memory(), era="handshake") as client:
            await client.call_tool("kick")
            await trio.testing.wait_all_tasks_blocked()
            assert server_session(server).background_tasks == 0
            await client.ping()
            assert (await client.call_tool("kick")).content[0].text == "accepted"  # type: ignore[union-attr]
    assert any("detached failure" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


async def test_background_notifications_are_not_tied_to_a_request() -> None:
    server = Server("s")
    from ._support import RecordingTransport

    async def work(bg: BackgroundContext) -> None:
        await bg.notify("notifications/message", {"level": "info", "data": "x"})

    @server.tool()
    async def kick(ctx: ToolContext) -> str:
        ctx.detach_for_background(work)
        return "accepted"

    transport = RecordingTransport(server)
    async with open_client(transport, era="handshake") as client:
        await client.call_tool("kick")
        await trio.testing.wait_all_tasks_blocked()
    assert transport.channel is not None
    notes = [(m, rel) for m, rel in transport.channel.sent if isinstance(m, Notification)]
    assert [(m.method, rel) for m, rel in notes] == [("notifications/message", None)]

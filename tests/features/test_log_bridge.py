"""Stdlib logging inside a handler reaches the client that made the request, at the level
that client's session set; ``logging/setLevel`` is per session."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import trio
import trio.testing

from trimcp import ConnectionClosedError, Server, ToolContext, open_client
from trimcp.protocol import LoggingMessageParams
from trimcp.server import McpLogHandler
from trimcp.wire import Message, Notification, Response

WAIT = 30


@pytest.fixture
def app_logger() -> Iterator[logging.Logger]:
    log = logging.getLogger("notes.app")
    handler = McpLogHandler(buffer_size=4)
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        yield log
    finally:
        log.removeHandler(handler)
        log.propagate = True


def _server(log: logging.Logger) -> Server:
    server = Server("logs")

    @server.tool()
    async def work(who: str) -> str:
        log.debug("debug from %s", who)
        log.info("info from %s", who)
        log.warning("warning from %s", who)
        return who

    @server.tool()
    async def chatty(count: int) -> str:
        for i in range(count):
            log.info("line %d", i)
        return "done"

    @server.tool()
    async def fails() -> str:
        log.error("about to fail")
        raise ValueError("boom")

    @server.tool()
    async def in_child_task() -> str:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_child, log)
        return "ok"

    return server


async def _child(log: logging.Logger) -> None:
    await trio.lowlevel.checkpoint()
    log.warning("from a child task")


class Inbox:
    """What one client received, in order: log messages and responses."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.logs: list[LoggingMessageParams] = []

    async def on_log(self, params: LoggingMessageParams) -> None:
        self.logs.append(params)

    async def record(self, message: Message, call_next: object) -> None:
        if isinstance(message, Notification) and message.method == "notifications/message":
            self.order.append("log")
        elif isinstance(message, Response):
            self.order.append("response")
        await call_next(message)  # type: ignore[operator]


async def test_records_reach_only_their_own_client_at_its_level(app_logger: logging.Logger) -> None:
    server = _server(app_logger)
    quiet, loud = Inbox(), Inbox()
    async with (
        open_client(server.in_memory(), on_log=quiet.on_log, era="handshake") as first,
        open_client(server.in_memory(), on_log=loud.on_log, era="handshake") as second,
    ):
        await first.set_logging_level("warning")
        await second.set_logging_level("debug")
        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(first.call_tool, "work", {"who": "first"})
                nursery.start_soon(second.call_tool, "work", {"who": "second"})
    assert [(p.level.value, p.data, p.logger) for p in quiet.logs] == [
        ("warning", "warning from first", "notes.app")
    ]
    assert [(p.level.value, p.data) for p in loud.logs] == [
        ("debug", "debug from second"),
        ("info", "info from second"),
        ("warning", "warning from second"),
    ]


async def test_every_message_precedes_the_response(app_logger: logging.Logger) -> None:
    server = _server(app_logger)
    inbox = Inbox()
    from trimcp import Middlewares

    middlewares = Middlewares()
    middlewares.client_recv.add(inbox.record)
    async with open_client(
        server.in_memory(), on_log=inbox.on_log, middlewares=middlewares, era="handshake"
    ) as c:
        inbox.order.clear()
        with trio.fail_after(WAIT):
            result = await c.call_tool("work", {"who": "x"})
            failed = await c.call_tool("fails")
            await c.call_tool("in_child_task")
    assert result.is_error is False
    assert failed.is_error is True
    assert inbox.order == ["log"] * 3 + ["response"] + ["log", "response"] + ["log", "response"]
    assert inbox.logs[3].data == "about to fail"
    assert inbox.logs[3].level.value == "error"
    assert inbox.logs[4].data == "from a child task"


async def test_a_full_buffer_drops_the_oldest_and_says_so(app_logger: logging.Logger) -> None:
    server = _server(app_logger)
    inbox = Inbox()
    async with open_client(server.in_memory(), on_log=inbox.on_log, era="handshake") as client:
        with trio.fail_after(WAIT):
            await client.call_tool("chatty", {"count": 10})
    data = [p.data for p in inbox.logs]
    # Ten records with nothing sent between them; the buffer holds four.
    assert data[:4] == ["line 6", "line 7", "line 8", "line 9"]
    assert data[4] == "6 log records were dropped (buffer full)"
    assert inbox.logs[4].level.value == "warning"
    assert len(data) == 5


async def test_records_outside_a_request_are_not_forwarded(app_logger: logging.Logger) -> None:
    server = _server(app_logger)
    inbox = Inbox()
    async with open_client(server.in_memory(), on_log=inbox.on_log, era="handshake") as client:
        app_logger.warning("outside")
        await trio.testing.wait_all_tasks_blocked()
        await client.ping()
    assert inbox.logs == []


async def test_a_record_after_the_session_closed_is_dropped(app_logger: logging.Logger) -> None:
    server = Server("late")
    kept: list[ToolContext] = []

    @server.tool()
    async def keep(ctx: ToolContext) -> str:
        kept.append(ctx)
        return "ok"

    async with open_client(server.in_memory(), era="handshake") as client:
        await client.call_tool("keep")
    # The session is gone; the route must swallow the failure, not raise from emit.
    from trimcp.server._log_bridge import LogRoute

    route = LogRoute(kept[0].handler)
    route.push({"level": "info", "data": "late"}, 4)
    with pytest.raises(ConnectionClosedError):
        await kept[0].handler.session_object.notify("notifications/message", {})


def test_buffer_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        McpLogHandler(buffer_size=0)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_logs_reach_on_log_by_default_in_every_era(era: str) -> None:
    server = Server("chatty")

    @server.tool()
    async def chatter(ctx: ToolContext) -> str:
        await ctx.log("debug", "fine detail")
        await ctx.log("info", "working")
        return "ok"

    received: list[tuple[str, object]] = []

    async def on_log(params: LoggingMessageParams) -> None:
        received.append((params.level.value, params.data))

    with trio.fail_after(30):
        async with open_client(server.in_memory(), on_log=on_log, era=era) as client:  # type: ignore[arg-type]
            result = await client.call_tool("chatter", {})
            assert result.is_error is False
            await trio.testing.wait_all_tasks_blocked()
            assert received == [("debug", "fine detail"), ("info", "working")]
            received.clear()
            await client.set_logging_level("info")
            await client.call_tool("chatter", {})
            await trio.testing.wait_all_tasks_blocked()
            assert received == [("info", "working")]

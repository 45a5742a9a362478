"""Structured request logging and timing, on a server's stacks and on a client's."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

import trimcp
from trimcp.dispatch import CallNext
from trimcp.middleware import Completed, RequestLogging, Timing
from trimcp.wire import Message, Notification, Request

from ._servers import tool_server


async def _exercise(client: trimcp.Client) -> None:
    await client.call_tool("echo", {"text": "hi"})
    with pytest.raises(trimcp.McpError):
        await client.call_tool("broken")
    await client.call_tool("soft")
    with trio.move_on_after(5):
        await client.call_tool("hold")
    await client.ping()


async def test_request_logging_writes_one_structured_record_per_request(
    caplog: pytest.LogCaptureFixture, autojump_clock: object
) -> None:
    server = tool_server()
    RequestLogging().install(server.middlewares)
    with caplog.at_level(logging.INFO, logger="trimcp.requests"):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            await _exercise(client)
            await trio.testing.wait_all_tasks_blocked()
    records = [r for r in caplog.records if r.name == "trimcp.requests"]
    calls = [r for r in records if getattr(r, "mcp_method", None) == "tools/call"]
    assert [(r.mcp_target, r.mcp_outcome, r.levelno) for r in calls] == [  # type: ignore[attr-defined]
        ("echo", "ok", logging.INFO),
        ("broken", "error", logging.WARNING),
        ("soft", "tool_error", logging.WARNING),
        ("hold", "cancelled", logging.WARNING),
    ]
    broken = calls[1]
    assert broken.mcp_error_code == -32099  # type: ignore[attr-defined]
    assert broken.getMessage().startswith("inbound tools/call broken #")
    assert "error -32099" in broken.getMessage()
    assert calls[3].duration_ms == pytest.approx(5000)  # type: ignore[attr-defined]
    # nothing of the params or results is logged
    assert all("hi" not in r.getMessage() and "password" not in r.getMessage() for r in records)


async def test_timing_keeps_per_method_stats_on_both_roles(autojump_clock: object) -> None:
    server = tool_server()

    @server.tool()
    async def nap(seconds: float) -> str:
        await trio.sleep(seconds)
        return "ok"

    seen: list[Completed] = []
    server_timing = Timing(seen.append)
    server_timing.install(server.middlewares)
    client_timing = Timing()
    client_side = client_timing.install(trimcp.Middlewares(), role="client")
    async with trimcp.open_client(
        server.in_memory(), middlewares=client_side, era="handshake"
    ) as client:
        await client.call_tool("nap", {"seconds": 2})
        await client.call_tool("nap", {"seconds": 4})
        with pytest.raises(trimcp.McpError):
            await client.call_tool("broken")
    for timing, direction in ((server_timing, "inbound"), (client_timing, "outbound")):
        stats = timing.stats[(direction, "tools/call")]  # type: ignore[index]
        assert stats.count == 3
        assert stats.errors == 1
        assert stats.max_seconds == pytest.approx(4)
        assert stats.mean_seconds == pytest.approx(2)
        assert timing.stats[(direction, "initialize")].count == 1  # type: ignore[index]
    assert [r.target for r in seen if r.method == "tools/call"] == ["nap", "nap", "broken"]


async def test_timing_bounds_its_tables(autojump_clock: object) -> None:
    server = tool_server()

    # Around it, a middleware drops the cancellations; inside it, another drops every
    # ping: those requests are never answered, nor given up as far as it can tell.
    @server.middlewares.server_recv.add
    async def drop_cancellations(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            return
        await call_next(message)

    timing = Timing(max_methods=2, max_tracked=3)
    timing.install(server.middlewares)

    @server.middlewares.server_recv.add
    async def drop_pings(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request) and message.method == "ping":
            return
        await call_next(message)

    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        for _ in range(10):
            with trio.move_on_after(0.01):
                await client.ping()
        (session,) = server.sessions
        assert timing._inbound.tracked(session) == 3
        await client.call_tool("echo", {"text": "x"})
        await client.list_all_tools()
    assert set(timing.stats) == {
        ("inbound", "initialize"),
        ("inbound", "tools/call"),
        ("inbound", "other"),
    }

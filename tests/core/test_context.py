"""HandlerContext: identity, scope, session view, notify, progress, and its lifetime."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.lowlevel

from trimcp import ContextClosedError, Server, ToolContext, open_client
from trimcp.dispatch import Middlewares, Registry
from trimcp.nursery import BackgroundContext, HandlerContext
from trimcp.wire import Message, Notification, Request, Response

from ._schema_check import SchemaCheck
from ._support import no_leaked_tasks, raw_session, served, server_session


async def test_context_carries_id_method_params_and_meta() -> None:
    registry = Registry()
    seen: list[HandlerContext] = []

    async def echo(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        seen.append(ctx)
        assert ctx.params is params
        assert not ctx.closed
        return {}

    registry.add_request("echo", echo)
    async with raw_session(registry) as (peer, _session):
        params = {"a": 1, "_meta": {"progressToken": "tok", "x": 2}}
        assert await peer.request("r1", "echo", params) == Response(id="r1", result={})
    (ctx,) = seen
    assert ctx.request_id == "r1"
    assert ctx.method == "echo"
    assert ctx.params == params
    assert ctx.meta == {"progressToken": "tok", "x": 2}
    assert ctx.progress_token == "tok"
    assert ctx.closed


async def test_cancelling_the_context_scope_ends_the_request_without_a_response() -> None:
    registry = Registry()
    reached: list[str] = []

    async def give_up(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        ctx.cancel_scope.cancel()
        await trio.lowlevel.checkpoint()
        reached.append("after")  # never: the checkpoint raised Cancelled
        return {}

    async def ok(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return {"ok": 1}

    registry.add_request("give_up", give_up)
    registry.add_request("ok", ok)
    async with raw_session(registry) as (peer, session):
        await peer.send(Request(id=1, method="give_up"))
        assert await peer.quiet_drain() == []
        assert reached == []
        assert session.in_flight == 0
        assert await peer.request(2, "ok") == Response(id=2, result={"ok": 1})


async def test_cancelling_the_scope_means_no_response_even_without_a_checkpoint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = Registry()

    async def returns_anyway(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        ctx.cancel_scope.cancel()
        return {"x": 1}  # no checkpoint: the cancellation was never delivered

    async def fails_in_cleanup(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        ctx.cancel_scope.cancel()
        try:
            await trio.sleep(1)
        finally:
            raise ValueError("cleanup failed")

    registry.add_request("returns_anyway", returns_anyway)
    registry.add_request("fails_in_cleanup", fails_in_cleanup)
    async with raw_session(registry) as (peer, session):
        await peer.send(Request(id=1, method="returns_anyway"))
        await peer.send(Request(id=2, method="fails_in_cleanup"))
        assert await peer.quiet_drain() == []
        assert session.in_flight == 0
    # The failure is not answered, but it is not swallowed silently either.
    assert any("cleanup failed" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


async def test_session_view_shows_both_sides() -> None:
    server = Server("srv", version="2.0", instructions="be nice")
    views: list[Any] = []

    @server.tool()
    async def look(ctx: ToolContext) -> str:
        state = ctx.session
        views.append(
            (
                state.protocol_version,
                state.client_info.name if state.client_info else None,
                state.client_capabilities.roots is not None,
                state.client_capabilities.sampling is not None,
                state.server_info.name if state.server_info else None,
                state.server_capabilities.tools is not None,
                state.instructions,
                ctx.handler.session is state,
            )
        )
        return "ok"

    async with open_client(
        server.in_memory(), name="cli", protocol_version="2025-06-18", roots=[], era="handshake"
    ) as client:
        await client.call_tool("look")
        assert client.state.server_info is not None
        assert client.state.server_info.name == "srv"
        assert client.instructions == "be nice"
    assert views == [("2025-06-18", "cli", True, False, "srv", True, "be nice", True)]


async def test_notify_goes_to_the_peer() -> None:
    server = Server("s")
    check = SchemaCheck().install(server.middlewares)

    @server.tool()
    async def talk(ctx: ToolContext) -> str:
        await ctx.notify("notifications/message", {"level": "info", "data": "hi"})
        await ctx.log("warning", {"k": 1}, logger="mine")
        return "done"

    async with served(server) as (peer, _session):
        await peer.send(Request(id=1, method="tools/call", params={"name": "talk"}))
        first, second, answer = [await peer.receive() for _ in range(3)]
        assert first == Notification(
            method="notifications/message", params={"level": "info", "data": "hi"}
        )
        assert second == Notification(
            method="notifications/message",
            params={"level": "warning", "data": {"k": 1}, "logger": "mine"},
        )
        assert isinstance(answer, Response)
    assert check.validate("2025-11-25")["LoggingMessageNotification"] == 2


async def test_progress_is_a_noop_without_a_token() -> None:
    server = Server("s")
    sent: list[Message] = []

    async def record(message: Message, call_next: Any) -> None:
        sent.append(message)
        await call_next(message)

    server.middlewares.server_send.add(record)

    @server.tool()
    async def work(ctx: ToolContext) -> str:
        assert ctx.handler.progress_token is None
        await ctx.report_progress(1, 10)
        await ctx.report_progress(0.5)  # not even checked: nobody asked for progress
        return "ok"

    async with open_client(server.in_memory(), era="handshake") as client:
        await client.call_tool("work")
    assert not any(isinstance(m, Notification) and "progress" in m.method for m in sent)


async def test_progress_reaches_on_progress_in_order_and_must_not_decrease() -> None:
    server = Server("s")
    check = SchemaCheck().install(server.middlewares)
    errors: list[str] = []

    @server.tool()
    async def work(ctx: ToolContext) -> str:
        await ctx.report_progress(1, 4, "one")
        await ctx.report_progress(2, 4)
        await ctx.report_progress(2, 4, "same is fine")
        try:
            await ctx.report_progress(1.5)
        except ValueError as exc:
            errors.append(str(exc))
        await ctx.report_progress(4, 4, "done")
        return "ok"

    got: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        got.append((progress, total, message))

    async with open_client(server.in_memory(), era="handshake") as client:
        result = await client.call_tool("work", on_progress=on_progress)
        assert result.content[0].text == "ok"  # type: ignore[union-attr]
    assert got == [(1, 4, "one"), (2, 4, None), (2, 4, "same is fine"), (4, 4, "done")]
    assert errors == ["progress must not decrease (was 2, got 1.5)"]
    assert check.validate("2025-11-25")["ProgressNotification"] == 4


async def test_using_the_context_after_its_request_ended_fails_clearly() -> None:
    registry = Registry()
    kept: list[HandlerContext] = []

    async def keep(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        kept.append(ctx)
        return {}

    registry.add_request("keep", keep)
    async with raw_session(registry) as (peer, _session):
        await peer.request(1, "keep", {"_meta": {"progressToken": 1}})
        (ctx,) = kept
        assert ctx.closed

        async def noop(bg: BackgroundContext) -> None:
            pass

        attempts = [
            ("send notifications/message", ctx.notify("notifications/message", {})),
            ("report progress", ctx.report_progress(1)),
            ("send roots/list", ctx.request("roots/list")),
        ]
        for what, attempt in attempts:
            with pytest.raises(ContextClosedError) as info:
                await attempt
            message = str(info.value)
            assert message.startswith(f"cannot {what}: request 1 (keep) has ended")
            assert "detach_for_background()" in message
        with pytest.raises(ContextClosedError, match="cannot detach work"):
            ctx.detach_for_background(noop)
        assert await peer.quiet_drain() == []  # nothing leaked onto the wire


async def test_a_cancelled_request_context_is_closed_too() -> None:
    server = Server("s")
    kept: list[ToolContext] = []

    @server.tool()
    async def hang(ctx: ToolContext) -> str:
        kept.append(ctx)
        await trio.sleep_forever()
        return "never"

    async with no_leaked_tasks(), served(server) as (peer, session):
        await peer.send(Request(id=3, method="tools/call", params={"name": "hang"}))
        await peer.settle()
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": 3}))
        await peer.settle()
        (ctx,) = kept
        assert ctx.handler.closed
        with pytest.raises(ContextClosedError, match=r"request 3 \(tools/call\) has ended"):
            await ctx.log("info", "late")
        assert await peer.quiet_drain() == []
        assert session.in_flight == 0


async def test_client_side_handlers_get_a_context_too() -> None:
    server = Server("s")
    seen: list[tuple[Any, str]] = []
    middlewares = Middlewares()

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        await ctx.list_roots()
        return "ok"

    async def roots(ctx: HandlerContext) -> list[Any]:
        seen.append((ctx.request_id, ctx.method))
        return []

    async with open_client(
        server.in_memory(), roots=roots, middlewares=middlewares, era="handshake"
    ) as client:
        await client.call_tool("ask")
        assert server_session(server).pending == 0
    assert len(seen) == 1
    assert seen[0][1] == "roots/list"
    assert isinstance(seen[0][0], int)

"""User callbacks run off the session's reader: they may call back into their own
client, they run in order per kind, and what they queue is bounded."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

import trimcp
from trimcp.dispatch import Registry
from trimcp.nursery import SessionLimits
from trimcp.protocol import LoggingMessageParams
from trimcp.wire import Notification, Request

from ._support import RawServerTransport, raw_session


def _server() -> trimcp.Server:
    server = trimcp.Server("callbacks", declare_tools=True)

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def steps(ctx: trimcp.ToolContext, count: int) -> str:
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
        return "done"

    @server.tool()
    async def chatty(ctx: trimcp.ToolContext, count: int) -> str:
        for i in range(count):
            await ctx.log("info", f"line {i}")
        return "ok"

    return server


async def test_a_list_changed_callback_may_list_the_tools(autojump_clock: Any) -> None:
    """``on_tools_list_changed`` -> ``list_all_tools()``: the reader is free to read the
    answer, so the callback finishes at once instead of stalling the session."""
    server = _server()
    listed: list[list[str]] = []
    done = trio.Event()
    clients: list[trimcp.Client] = []

    async def on_changed() -> None:
        tools = await clients[0].list_all_tools()
        listed.append([tool.name for tool in tools])
        done.set()

    async with trimcp.open_client(
        server.in_memory(), on_tools_list_changed=on_changed, era="handshake"
    ) as client:
        clients.append(client)
        start = trio.current_time()

        @server.tool()
        async def added() -> str:
            return "new"

        with trio.fail_after(5):
            await done.wait()
        assert trio.current_time() - start < 1  # not after a request timeout
        assert listed == [["echo", "steps", "chatty", "added"]]
        result = await client.call_tool("echo", {"text": "still fine"})
        assert result.content[0].text == "still fine"  # type: ignore[union-attr]


async def test_callbacks_that_call_back_run_in_order_per_kind(autojump_clock: Any) -> None:
    server = _server()
    order: list[str] = []
    clients: list[trimcp.Client] = []

    async def on_log(params: LoggingMessageParams) -> None:
        await clients[0].ping()  # a round trip from inside the callback
        order.append(str(params.data))

    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        await clients[0].ping()
        progress.append(done)

    async with trimcp.open_client(server.in_memory(), on_log=on_log, era="handshake") as client:
        clients.append(client)
        with trio.fail_after(5):
            await client.call_tool("chatty", {"count": 5})
            result = await client.call_tool("steps", {"count": 4}, on_progress=on_progress)
        assert result.content[0].text == "done"  # type: ignore[union-attr]
        # progress callbacks ran in the caller's task, all before its result
        assert progress == [1, 2, 3, 4]
        await trio.testing.wait_all_tasks_blocked()
        assert order == [f"line {i}" for i in range(5)]


async def test_a_slow_callback_holds_up_its_own_kind_only() -> None:
    registry = Registry()
    gate = trio.Event()
    seen: list[tuple[str, Any]] = []

    async def slow(_session: Any, params: dict[str, Any] | None) -> None:
        await gate.wait()
        seen.append(("slow", (params or {}).get("n")))

    async def quick(_session: Any, params: dict[str, Any] | None) -> None:
        seen.append(("quick", (params or {}).get("n")))

    async def ping(_ctx: Any, _params: Any) -> dict[str, Any]:
        return {}

    registry.add_notification("slow", slow)
    registry.add_notification("quick", quick)
    registry.add_request("ping", ping)
    async with raw_session(registry) as (peer, session):
        for n in range(3):
            await peer.send(Notification(method="slow", params={"n": n}))
            await peer.send(Notification(method="quick", params={"n": n}))
        # The reader still answers requests while a callback waits.
        assert (await peer.request(1, "ping")).id == 1  # type: ignore[union-attr]
        await peer.settle()
        assert seen == [("quick", 0), ("quick", 1), ("quick", 2)]
        gate.set()
        await peer.settle()
        assert seen[3:] == [("slow", 0), ("slow", 1), ("slow", 2)]
        assert session.dropped_callbacks == 0


async def test_callback_queues_are_bounded_and_signals_coalesce() -> None:
    registry = Registry()
    gate = trio.Event()
    seen: list[Any] = []

    async def held(_session: Any, params: dict[str, Any] | None) -> None:
        await gate.wait()
        seen.append(params)

    registry.add_notification("held", held)
    registry.add_notification("signal", held)
    limits = SessionLimits(max_queued_callbacks=4)
    async with raw_session(registry, limits=limits) as (peer, session):
        for n in range(10):
            await peer.send(Notification(method="held", params={"n": n}))
        for _ in range(10):
            await peer.send(Notification(method="signal"))
        await peer.settle()
        # "held": the first runs, 4 wait, 5 were dropped (the oldest waiting ones)
        assert session.dropped_callbacks == 5
        gate.set()
        await peer.settle()
        held_seen = [p["n"] for p in seen if p]
        assert held_seen == [0, 6, 7, 8, 9]
        # "signal": one running, one waiting: the other eight said nothing new
        assert seen.count(None) == 2


async def test_progress_callbacks_are_bounded_per_call(autojump_clock: Any) -> None:
    """A server flooding progress while the callback is slow: the oldest progress is
    dropped, never the answer, and the callback sees the last value."""
    transport = RawServerTransport()
    got: list[float] = []
    release = trio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        await release.wait()
        got.append(done)

    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            await transport.answer_initialize()
            call = await transport.peer.receive()
            assert isinstance(call, Request)
            token = call.params["_meta"]["progressToken"]  # type: ignore[index]
            for step in range(1, 21):
                await transport.peer.send(
                    Notification(
                        method="notifications/progress",
                        params={"progressToken": token, "progress": step},
                    )
                )
            await trio.testing.wait_all_tasks_blocked()
            release.set()
            await transport.peer.send(
                trimcp.wire.Response(id=call.id, result={"content": [], "isError": False})
            )

        nursery.start_soon(serve)
        async with trimcp.open_client(
            transport, era="handshake", limits=SessionLimits(max_queued_callbacks=3)
        ) as client:
            with trio.fail_after(5):
                result = await client.call_tool("x", on_progress=on_progress)
            assert result.content == []
    assert got[0] == 1  # the first was already running
    assert got[-3:] == [18, 19, 20]
    assert len(got) == 4


async def test_a_call_returns_after_the_callbacks_of_what_came_before_its_answer(
    autojump_clock: Any,
) -> None:
    """The log lines a tool sent while it ran have reached ``on_log`` when its call
    returns, however slow the callback: they arrived before the answer."""
    seen: list[str] = []

    async def on_log(params: LoggingMessageParams) -> None:
        await trio.sleep(1)  # slower than the answer
        seen.append(str(params.data))

    async with trimcp.open_client(_server().in_memory(), on_log=on_log, era="handshake") as client:
        await client.call_tool("chatty", {"count": 3})
        assert seen == ["line 0", "line 1", "line 2"]


async def test_calls_made_by_callbacks_do_not_wait_for_callbacks(autojump_clock: Any) -> None:
    """A callback's own calls skip the wait: two callbacks that call back into their
    client while each other's notifications are queued finish, and so does the call
    that caused them."""
    server = _server()
    clients: list[trimcp.Client] = []
    seen: list[str] = []

    async def on_log(params: LoggingMessageParams) -> None:
        result = await clients[0].call_tool("echo", {"text": str(params.data)})
        seen.append(result.content[0].text)  # type: ignore[union-attr]

    async def on_changed() -> None:
        seen.append(f"tools: {len(await clients[0].list_all_tools())}")

    @server.tool()
    async def change_and_log(ctx: trimcp.ToolContext) -> str:
        server.remove_tool("steps")
        await ctx.log("info", "after the change")
        return "ok"

    async with trimcp.open_client(
        server.in_memory(), on_log=on_log, on_tools_list_changed=on_changed, era="handshake"
    ) as client:
        clients.append(client)
        with trio.fail_after(10):
            result = await client.call_tool("change_and_log", {})
        assert result.content[0].text == "ok"  # type: ignore[union-attr]
        # remove_tool sends its list_changed in the background (notify_soon), so it may
        # come after the answer: its callback finishes once the client is quiet.
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(seen) == ["after the change", "tools: 3"]

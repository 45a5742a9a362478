"""Plain ``def`` tools, resources and prompts run in the server's bounded worker threads.

These tests coordinate with the worker threads through threading events (a thread blocks
on them; nothing sleeps on the wall clock), so they run on the real clock.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.server import Server

WAIT = 30


def _text(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


async def _cancelled_once_started(
    client: trimcp.Client, tool: str, started: threading.Event
) -> bool:
    """Call ``tool`` and cancel the call once its thread set ``started``; whether the
    call was cancelled."""
    with trio.CancelScope() as scope:

        async def cancel_once_started() -> None:
            await trio.to_thread.run_sync(started.wait, WAIT)
            scope.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_once_started)
            await client.call_tool(tool, {})
    return scope.cancelled_caught


async def test_plain_functions_run_in_worker_threads() -> None:
    server = Server("sync")
    loop_thread = threading.get_ident()
    seen: list[int] = []

    @server.tool()
    def add(a: int, b: int) -> int:
        seen.append(threading.get_ident())
        return a + b

    @server.resource("test://static")
    def static() -> str:
        seen.append(threading.get_ident())
        return "static"

    @server.prompt()
    def hello(name: str) -> str:
        seen.append(threading.get_ident())
        return f"hello {name}"

    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}
            read = await client.read_resource("test://static")
            assert read.contents[0].text == "static"  # type: ignore[union-attr]
            prompt = await client.get_prompt("hello", {"name": "you"})
            assert prompt.messages[0].content.text == "hello you"  # type: ignore[union-attr]
    assert len(seen) == 3
    assert loop_thread not in seen


async def test_the_threads_are_bounded() -> None:
    server = Server("bounded", worker_threads=2)
    release = threading.Event()
    two_running = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    @server.tool()
    def block(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            if running == 2:
                two_running.set()
        release.wait(WAIT)
        with lock:
            running -= 1
        return n

    results: list[int] = []
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:

            async def call(n: int) -> None:
                result = await client.call_tool("block", {"n": n})
                results.append(result.structured_content["result"])

            async with trio.open_nursery() as nursery:
                for n in range(5):
                    nursery.start_soon(call, n)
                await trio.to_thread.run_sync(two_running.wait, WAIT)
                await trio.testing.wait_all_tasks_blocked()  # the other calls queue
                limiter = server.workers.limiter
                assert limiter.borrowed_tokens == 2
                assert limiter.statistics().tasks_waiting == 3
                release.set()
    assert sorted(results) == [0, 1, 2, 3, 4]
    assert most == 2


async def test_a_cancelled_call_stops_waiting_for_its_thread() -> None:
    server = Server("cancel", worker_threads=1)
    started = threading.Event()
    release = threading.Event()
    finished = threading.Event()

    @server.tool()
    def stuck() -> str:
        started.set()
        release.wait(WAIT)
        finished.set()
        return "late"

    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            assert await _cancelled_once_started(client, "stuck", started)
            assert not finished.is_set()  # the call ended while its thread still ran
            # The thread keeps its slot until it ends; then the next call gets it.
            assert server.workers.limiter.borrowed_tokens == 1
            release.set()
            await trio.to_thread.run_sync(finished.wait, WAIT)
            started.clear()
            release.set()
            assert _text(await client.call_tool("stuck", {})) == "late"


async def test_a_long_function_can_stop_early_when_cancelled() -> None:
    server = Server("polite")
    started = threading.Event()
    stopped = threading.Event()
    step = threading.Event()  # never set: each wait is one bounded step of blocking work

    @server.tool()
    def spin() -> str:
        started.set()
        try:
            while True:
                trio.from_thread.check_cancelled()
                step.wait(0.001)
        except trio.Cancelled:
            stopped.set()
            raise

    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            assert await _cancelled_once_started(client, "spin", started)
            assert await trio.to_thread.run_sync(stopped.wait, WAIT)


async def test_a_plain_function_reaches_its_context_through_from_thread() -> None:
    server = Server("progress")
    updates: list[float] = []

    @server.tool()
    def work(ctx: trimcp.ToolContext, steps: int) -> str:
        for step in range(1, steps + 1):
            trio.from_thread.run(ctx.report_progress, step, steps)
        return "done"

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        updates.append(value)

    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            result = await client.call_tool("work", {"steps": 3}, on_progress=on_progress)
    assert _text(result) == "done"
    assert updates == [1, 2, 3]


async def test_errors_of_plain_functions_are_tool_errors() -> None:
    server = Server("errors")

    @server.tool()
    def refuse() -> str:
        raise trimcp.ToolError("no, thanks")

    @server.tool()
    def crash() -> str:
        raise RuntimeError("secret detail")

    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            refused = await client.call_tool("refuse", {})
            assert refused.is_error
            assert _text(refused) == "no, thanks"
            crashed = await client.call_tool("crash", {})
            assert crashed.is_error
            assert "secret" not in _text(crashed)


def test_worker_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match="worker_threads"):
        Server("x", worker_threads=0)

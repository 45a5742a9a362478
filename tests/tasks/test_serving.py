"""Where tasks run: the server-level nursery, its end, and serving without one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

import trimcp
from trimcp.nursery import MessageChannel
from trimcp.transports import memory_channel_pair

from ._support import WITH_TASKS, error_of, meta, task_server


class _NoTaskHost:
    """Serves the server's sessions but not its task nursery (like a bare ASGI mount)."""

    def __init__(self, server: trimcp.Server) -> None:
        self.server = server

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MessageChannel]:
        client_end, server_end = memory_channel_pair()
        async with trio.open_nursery() as nursery:
            await nursery.start(self.server.serve_channel, server_end)
            try:
                yield client_end
            finally:
                nursery.cancel_scope.cancel()


async def test_tasks_outlive_their_request_and_end_with_the_server(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        created = await client.request(
            "tools/call", {"name": "gated", "arguments": {"name": "x"}, "_meta": meta(WITH_TASKS)}
        )
        await probe.started.wait()
        assert server.tasks.running
        assert len(server.tasks) == 1
        assert created["resultType"] == "task"
    # the transport closed: its task nursery ended, cancelling the work, leaving nothing
    assert probe.cancelled == 1
    assert len(server.tasks) == 0
    assert not server.tasks.running
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_without_a_task_nursery_optional_runs_in_the_request_required_fails(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, _recorder, probe = task_server()
    probe.go.set()
    async with trimcp.open_client(_NoTaskHost(server), era="handshake") as client:
        plain = await client.request(
            "tools/call", {"name": "gated", "arguments": {"name": "x"}, "_meta": meta(WITH_TASKS)}
        )
        assert "taskId" not in plain
        assert plain["content"][0]["text"] == "Hello, x!"
        refused = await error_of(
            client.request(
                "tools/call", {"name": "tool_error", "arguments": {}, "_meta": meta(WITH_TASKS)}
            )
        )
        assert refused.code == -32603
        assert "not being served" in refused.message


async def test_two_task_nurseries_new_tasks_go_to_the_newest(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = trimcp.server.TaskStore()
    async with trio.open_nursery() as outer:
        await outer.start(store.run)
        async with trio.open_nursery() as inner:
            await inner.start(store.run)
            ran: list[str] = []

            async def work() -> None:
                ran.append("started")
                try:
                    await trio.sleep_forever()
                finally:
                    ran.append("ended")

            store.spawn(work)
            await trio.testing.wait_all_tasks_blocked()
            assert ran == ["started"]
            inner.cancel_scope.cancel()
        assert ran == ["started", "ended"]  # it ran in the newest, which ended it
        assert store.running  # the outer one still serves
        outer.cancel_scope.cancel()
    assert not store.running


async def test_the_asgi_app_runs_the_task_nursery_under_lifespan_and_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, _recorder, _probe = task_server()
    app = trimcp.asgi_app(server)
    to_app_send, to_app = trio.open_memory_channel[dict[str, Any]](4)
    from_app_send, from_app = trio.open_memory_channel[dict[str, Any]](4)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(app, {"type": "lifespan"}, to_app.receive, from_app_send.send)
        await to_app_send.send({"type": "lifespan.startup"})
        assert (await from_app.receive())["type"] == "lifespan.startup.complete"
        assert server.tasks.running
        await to_app_send.send({"type": "lifespan.shutdown"})
        assert (await from_app.receive())["type"] == "lifespan.shutdown.complete"
    assert not server.tasks.running
    async with trio.open_nursery() as nursery:
        await nursery.start(trimcp.asgi_app(server).run)
        assert server.tasks.running
        nursery.cancel_scope.cancel()
    assert not server.tasks.running


async def test_a_task_outlives_another_clients_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Client A's running task belongs to A's serving: client B, connected after A and
    going away while A's task runs, takes nothing of A's with it; A gets its result."""
    server, _recorder, probe = task_server()
    async with trimcp.open_client(server.in_memory(), era="handshake") as a:
        async with trimcp.open_client(server.in_memory(), era="handshake") as b:
            created = await a.request(
                "tools/call",
                {"name": "gated", "arguments": {"name": "A"}, "_meta": meta(WITH_TASKS)},
            )
            await probe.started.wait()
            await b.ping()
        await trio.testing.wait_all_tasks_blocked()
        assert probe.cancelled == 0
        task_id = created["taskId"]
        state = await a.request("tasks/get", {"taskId": task_id, "_meta": meta(WITH_TASKS)})
        assert state["status"] == "working"
        probe.go.set()
        await trio.testing.wait_all_tasks_blocked()
        state = await a.request("tasks/get", {"taskId": task_id, "_meta": meta(WITH_TASKS)})
        assert state["status"] == "completed"
        assert state["result"]["content"][0]["text"] == "Hello, A!"
    assert probe.cancelled == 0
    assert len(server.tasks) == 0  # A's serving ended: its task with it

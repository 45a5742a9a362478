"""The task table: TTL expiry, the bound, unguessable ids, binding to the requester."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.server import DEFAULT_MAX_TASKS, TaskStore
from trimcp.server._task_store import MAX_PENDING_INPUTS
from trimcp.wire import Notification

from ._support import WITHOUT_TASKS, connected, error_of, task_server


async def test_a_finished_task_stays_for_its_ttl_then_is_gone(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server(TaskStore(ttl=10, poll_interval=2))
    async with connected(server) as (_client, send):
        start = trio.current_time()
        asks_for_all = {"progressToken": "p", "io.modelcontextprotocol/logLevel": "debug"}
        created = await send(
            "tools/call", {"name": "sleeper", "arguments": {"seconds": 3}, "_meta": asks_for_all}
        )
        assert created["ttlMs"] == 10_000
        assert created["pollIntervalMs"] == 2_000
        await trio.sleep_until(start + 2)
        halfway = await send("tasks/get", {"taskId": created["taskId"]})
        assert (halfway["status"], halfway["statusMessage"]) == ("working", "halfway")
        await trio.sleep_until(start + 9.5)
        kept = await send("tasks/get", {"taskId": created["taskId"]})
        assert kept["status"] == "completed"
        await trio.sleep_until(start + 10.5)
        gone = await error_of(send("tasks/get", {"taskId": created["taskId"]}))
        assert gone.code == -32602
        assert len(server.tasks) == 0
        # a task sends no progress or log notifications, though its request asked for both
        assert not [m for m, _ in recorder.sent if isinstance(m, Notification)]
        # run in its request, the same body does send them
        await send(
            "tools/call",
            {"name": "sleeper", "arguments": {"seconds": 1}, "_meta": asks_for_all},
            caps=WITHOUT_TASKS,
        )
        sent = {m.method for m, _ in recorder.sent if isinstance(m, Notification)}
        assert sent == {"notifications/progress", "notifications/message"}
    assert recorder.validate()["GetTaskResult"] == 2


async def test_work_still_running_at_its_ttl_is_cancelled_and_removed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server(TaskStore(ttl=5))
    async with connected(server) as (_client, send):
        start = trio.current_time()
        created = await send("tools/call", {"name": "gated", "arguments": {"name": "x"}})
        await trio.sleep_until(start + 4.9)
        assert (await send("tasks/get", {"taskId": created["taskId"]}))["status"] == "working"
        await trio.sleep_until(start + 5.1)
        assert probe.cancelled == 1
        assert (await error_of(send("tasks/get", {"taskId": created["taskId"]}))).code == -32602
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_the_table_is_bounded_with_a_clear_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server(TaskStore(max_tasks=2, ttl=60))
    async with connected(server) as (_client, send):
        call = {"name": "gated", "arguments": {"name": "x"}}
        first = await send("tools/call", call)
        await send("tools/call", call)
        full = await error_of(send("tools/call", call))
        assert full.code == -32600
        assert "at most 2 tasks" in full.message
        # a synchronous call of the same tool still works (no task needed)
        probe.go.set()
        plain = await send("tools/call", call, caps={})
        assert plain["content"][0]["text"] == "Hello, x!"
        # finished tasks keep their place until their TTL; then there is room again
        await trio.testing.wait_all_tasks_blocked()
        assert (await send("tasks/get", {"taskId": first["taskId"]}))["status"] == "completed"
        assert (await error_of(send("tools/call", call))).code == -32600
        await trio.sleep(61)
        assert len(server.tasks) == 0
        assert (await send("tools/call", call))["resultType"] == "task"
    assert DEFAULT_MAX_TASKS == TaskStore().max_tasks == 1024
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_task_ids_are_long_random_and_distinct(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    probe.go.set()
    async with connected(server) as (_client, send):
        ids = [
            (await send("tools/call", {"name": "gated", "arguments": {"name": "x"}}))["taskId"]
            for _ in range(50)
        ]
    assert len(set(ids)) == 50
    assert all(len(task_id) >= 32 for task_id in ids)  # 192 bits, base64url
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_tasks_are_bound_to_the_principal_that_created_them(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = TaskStore(owner=lambda ctx: ctx.meta.get("example.com/user"))
    server, recorder, probe = task_server(store)
    probe.go.set()
    async with connected(server) as (_client, send):

        def as_user(user: str) -> dict[str, object]:
            return {"example.com/user": user}

        created = await send(
            "tools/call", {"name": "gated", "arguments": {"name": "x"}, "_meta": as_user("alice")}
        )
        task_id = created["taskId"]
        await trio.testing.wait_all_tasks_blocked()
        mine = await send("tasks/get", {"taskId": task_id, "_meta": as_user("alice")})
        assert mine["status"] == "completed"
        for method, extra in (
            ("tasks/get", {}),
            ("tasks/cancel", {}),
            ("tasks/update", {"inputResponses": {}}),
        ):
            theirs = await error_of(
                send(method, {"taskId": task_id, **extra, "_meta": as_user("mallory")})
            )
            assert theirs.code == -32602  # exactly what an unknown id gets
            assert theirs.message == "Failed to retrieve task: Task not found"
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_the_store_refuses_nonsense_settings(autojump_clock: trio.testing.MockClock) -> None:
    with pytest.raises(ValueError, match="max_tasks"):
        TaskStore(max_tasks=0)
    with pytest.raises(ValueError, match="positive"):
        TaskStore(ttl=0)
    with pytest.raises(ValueError, match="positive"):
        TaskStore(poll_interval=-1)
    assert MAX_PENDING_INPUTS == 32

"""2025-11-25 core tasks between trimcp's client and server: negotiation, the task
lifecycle, input requests carried by tasks/result, cancellation, listing, TTLs."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trimcp
from trimcp.protocol import CoreTask
from trimcp.server import TaskStore

from ._core import Answers, WireLog, core_client
from ._support import error_of, task_server


def _logged(store: TaskStore | None = None) -> tuple[trimcp.Server, WireLog, object]:
    server, _recorder, probe = task_server(store)
    log = WireLog()
    log.install(server.middlewares)
    return server, log, probe


async def test_the_capability_and_task_support_are_negotiated_per_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, _probe = _logged()
    async with core_client(server) as client:
        tasks = client.state.server_capabilities.tasks
        assert tasks == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        listed = {tool.name: tool for tool in await client.list_all_tools()}
        assert listed["plain"].execution is None
        assert listed["gated"].execution.task_support == "optional"  # type: ignore[union-attr]
        assert listed["tool_error"].execution.task_support == "required"  # type: ignore[union-attr]
    async with trimcp.open_client(
        server.in_memory(), protocol_version="2025-06-18", era="handshake"
    ) as old:
        assert old.state.server_capabilities.tasks is None
        assert all(tool.execution is None for tool in await old.list_all_tools())
        # no tasks in that revision: a required tool cannot be called, tasks/* do not exist
        assert (await error_of(old.call_tool("tool_error", {}))).code == -32601
        assert (await error_of(old.request("tasks/list"))).code == -32601
    assert log.validate()["InitializeResult"] == 2


async def test_a_tool_called_as_a_task_runs_in_the_background_and_answers_tasks_result(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, probe = _logged()
    async with core_client(server) as client:
        task = await client.tasks.call_tool("gated", {"name": "core"}, ttl=60)
        assert task.status == "working"
        assert task.ttl == 60_000
        assert task.poll_interval == 500
        await probe.started.wait()  # type: ignore[attr-defined]
        assert (await client.tasks.get(task.task_id)).status == "working"
        probe.go.set()  # type: ignore[attr-defined]
        result = await client.tasks.wait(task)
        assert result.content[0].text == "Hello, core!"  # type: ignore[union-attr]
        assert (await client.tasks.get(task.task_id)).status == "completed"
        again = await client.request("tasks/result", {"taskId": task.task_id})
        assert again["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
        statuses = [n["status"] for n in log.notices("notifications/tasks/status")]
        assert "completed" in statuses  # notices are hints: their order is not promised
    seen = log.validate()
    assert seen["CreateTaskResult"] == 1
    assert seen["GetTaskResult"] >= 2
    assert seen["CallToolResult"] >= 2
    assert seen["TaskStatusNotification"] >= 1


async def test_call_tool_runs_a_required_tool_as_a_task_without_being_told(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, _probe = _logged()

    @server.tool(task_support="required")
    async def research(topic: str) -> str:
        await trio.sleep(3)
        return f"report on {topic}"

    async with core_client(server) as client:
        result = await client.call_tool("research", {"topic": "trio"})
        assert result.content[0].text == "report on trio"  # type: ignore[union-attr]
        # the raw call without a task is refused, as 2025-11-25 requires
        raw = client.request("tools/call", {"name": "research", "arguments": {"topic": "x"}})
        assert (await error_of(raw)).code == -32601
        # and a task on a tool that is not task-capable too
        bad = client.request("tools/call", {"name": "plain", "arguments": {}, "task": {}})
        assert (await error_of(bad)).code == -32601
        # an optional tool called plainly runs in its request
        plainly = {"name": "sleeper", "arguments": {"seconds": 1}}
        direct = await client.request("tools/call", plainly)
        assert direct["content"][0]["text"] == "slept 1"
    assert log.validate()["CreateTaskResult"] == 1


async def test_input_requests_travel_on_tasks_result_with_the_related_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, _probe = _logged()
    answers = Answers({"a": 1}, {"b": 2})
    async with core_client(server, elicitation=answers) as client:
        task = await client.tasks.call_tool("two_questions")
        await trio.testing.wait_all_tasks_blocked()
        state = await client.tasks.get(task.task_id)
        assert state.status == "input_required"
        assert answers.asked == []  # nothing is asked before tasks/result carries it
        result = await client.tasks.wait(task)
        assert result.content[0].text in ("{'a': 1} {'b': 2}", "{'b': 2} {'a': 1}")  # type: ignore[union-attr]
        assert len(answers.asked) == 2
    carried = log.requests("elicitation/create")
    assert len(carried) == 2
    for request in carried:
        assert request.params["_meta"]["io.modelcontextprotocol/related-task"] == {  # type: ignore[index]
            "taskId": task.task_id
        }
    statuses = [n["status"] for n in log.notices("notifications/tasks/status")]
    assert "input_required" in statuses
    assert "completed" in statuses
    assert log.validate()["ElicitRequest"] == 2


async def test_a_cancelled_tasks_result_cancels_what_it_carried_and_the_next_one_asks_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, _probe = _logged()
    first_form = trio.Event()
    answered = 0

    async def slow_then_quick(_ctx: object, _params: object) -> trimcp.protocol.ElicitResult:
        nonlocal answered
        if not first_form.is_set():
            first_form.set()
            await trio.sleep_forever()  # the user never answers this one
        answered += 1
        return trimcp.protocol.ElicitResult(action="accept", content={"n": answered})

    async with core_client(server, elicitation=slow_then_quick) as client:
        task = await client.tasks.call_tool("two_questions")
        with trio.move_on_after(5):
            await client.tasks.result(task.task_id, timeout=100)
        await trio.testing.wait_all_tasks_blocked()
        assert len(log.notices("notifications/cancelled")) >= 1  # the form was withdrawn
        assert (await client.tasks.get(task.task_id)).status == "input_required"
        result = await client.tasks.wait(task)
        assert not result.is_error
        assert answered == 2
    log.validate()


async def test_cancel_moves_the_task_to_cancelled_and_cancels_its_scope(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, probe = _logged()
    async with core_client(server) as client:
        task = await client.tasks.call_tool("gated", {"name": "x"})
        await probe.started.wait()  # type: ignore[attr-defined]
        cancelled = await client.tasks.cancel(task.task_id)
        assert cancelled.status == "cancelled"
        await trio.testing.wait_all_tasks_blocked()
        assert probe.cancelled == 1  # type: ignore[attr-defined]
        again = await error_of(client.tasks.cancel(task.task_id))
        assert again.code == -32602
        assert "terminal status 'cancelled'" in again.message
        with pytest.raises(trimcp.client.TaskCancelledError) as raised:
            await client.tasks.wait(task)
        assert raised.value.task.status == "cancelled"
    assert log.validate()["CancelTaskResult"] == 1


async def test_failures_are_failed_tasks_whose_result_is_what_the_call_would_have_been(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, _probe = _logged()
    async with core_client(server) as client:
        errored = await client.tasks.call_tool("tool_error")
        result = await client.tasks.wait(errored)
        assert result.is_error
        assert result.content[0].text == "bad input"  # type: ignore[union-attr]
        assert (await client.tasks.get(errored.task_id)).status == "failed"
        broken = await client.tasks.call_tool("protocol_error")
        error = await error_of(client.tasks.wait(broken))
        assert (error.code, error.message) == (-32603, "Internal error: it broke")
        assert (await client.tasks.get(broken.task_id)).status == "failed"
    log.validate()


async def test_tasks_are_listed_in_pages_and_seen_only_by_their_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, probe = _logged()
    server.page_size = 2
    async with core_client(server) as client, core_client(server) as other:
        made = [await client.tasks.call_tool("gated", {"name": str(i)}) for i in range(5)]
        page = await client.tasks.list()
        assert len(page.tasks) == 2
        assert page.next_cursor is not None
        listed = await client.tasks.list_all()
        assert [t.task_id for t in listed] == [t.task_id for t in made]
        assert await other.tasks.list_all() == []
        assert (await error_of(other.tasks.get(made[0].task_id))).code == -32602
        assert (await error_of(other.tasks.cancel(made[0].task_id))).code == -32602
        assert (await error_of(client.tasks.list("bogus"))).code == -32602
        probe.go.set()  # type: ignore[attr-defined]
    log.validate()


async def test_ttl_is_honoured_up_to_the_stores_and_the_task_goes_after_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, _log, probe = _logged(TaskStore(ttl=30))
    probe.go.set()  # type: ignore[attr-defined]
    async with core_client(server) as client:
        short = await client.tasks.call_tool("gated", {"name": "s"}, ttl=5)
        long = await client.tasks.call_tool("gated", {"name": "l"}, ttl=3600)
        assert (short.ttl, long.ttl) == (5_000, 30_000)
        await trio.sleep(6)
        assert (await error_of(client.tasks.get(short.task_id))).code == -32602
        assert (await client.tasks.get(long.task_id)).status == "completed"
        await trio.sleep(30)
        assert await client.tasks.list_all() == []
        bad = client.request("tools/call", {"name": "gated", "arguments": {}, "task": {"ttl": -1}})
        assert (await error_of(bad)).code == -32602


async def test_a_sessions_tasks_end_with_it(autojump_clock: trio.testing.MockClock) -> None:
    server, _log, probe = _logged()
    async with core_client(server) as keeper:
        async with core_client(server) as client:
            await client.tasks.call_tool("gated", {"name": "x"})
            await probe.started.wait()  # type: ignore[attr-defined]
            assert len(server.tasks) == 1
        await trio.testing.wait_all_tasks_blocked()
        assert probe.cancelled == 1  # type: ignore[attr-defined]
        assert len(server.tasks) == 0
        await keeper.ping()


async def test_progress_and_logs_of_a_task_reach_its_session_tagged_with_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, _probe = _logged()
    async with core_client(server) as client:
        await client.set_logging_level("info")
        raw = await client.request(
            "tools/call",
            {
                "name": "sleeper",
                "arguments": {"seconds": 2},
                "task": {},
                "_meta": {"progressToken": "p1"},
            },
        )
        task = CoreTask(
            task_id=raw["task"]["taskId"],
            status="working",
            created_at="",
            last_updated_at="",
            ttl=None,
        )
        await trio.sleep(1.5)
        assert (await client.tasks.get(task.task_id)).status_message == "halfway"
        await client.tasks.wait(task)
    related = {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
    (progress,) = log.notices("notifications/progress")
    assert progress["progressToken"] == "p1"
    assert progress["_meta"] == related
    (message,) = log.notices("notifications/message")
    assert message["data"] == "not sent for a task"
    assert message["_meta"] == related
    assert log.validate()["ProgressNotification"] == 1


async def test_client_task_calls_are_checkpoints(autojump_clock: trio.testing.MockClock) -> None:
    server, _log, probe = _logged()
    probe.go.set()  # type: ignore[attr-defined]
    async with core_client(server) as client:
        with trio.testing.assert_checkpoints():
            task = await client.tasks.call_tool("gated", {"name": "x"})
        with trio.testing.assert_checkpoints():
            await client.tasks.get(task.task_id)
        with trio.testing.assert_checkpoints():
            await client.tasks.list()
        with trio.testing.assert_checkpoints():
            await client.tasks.wait(task)


async def test_call_tool_in_the_stateless_era_uses_the_extension_when_told_to(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A stateless-era server answers a required tool's plain call with -32021 naming
    the tasks extension: call_tool calls it again as an extension task and follows it,
    answering its input with the client's own handler; client.tasks (core tasks) says
    clearly that it needs a handshake-era session."""
    server, _log, _probe = _logged()
    answers = Answers({"name": "Di"})
    async with trimcp.open_client(server.in_memory(), elicitation=answers) as client:
        assert client.era.stateless
        result = await client.call_tool("confirm_then_run", {})
        assert result.content[0].text == "ran for Di (task: True)"  # type: ignore[union-attr]
        refused = await error_of(client.tasks.list())
        assert refused.code == -32601
        assert "era='handshake'" in refused.message


async def test_the_table_bound_refuses_a_task_clearly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, log, probe = _logged(TaskStore(max_tasks=1))
    async with core_client(server) as client:
        await client.tasks.call_tool("gated", {"name": "one"})
        refused = await error_of(client.tasks.call_tool("gated", {"name": "two"}))
        assert refused.code == -32600
        assert "at most 1 tasks" in refused.message
        assert len(server.tasks) == 1
        probe.go.set()  # type: ignore[attr-defined]
    log.validate()

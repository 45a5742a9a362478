"""A task's life on the server: working, input_required, and the three terminal states."""

from __future__ import annotations

import trio
import trio.testing

from ._support import connected, error_of, task_server


async def test_working_then_completed_with_the_result_inlined(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    async with connected(server) as (_client, send):
        created = await send("tools/call", {"name": "gated", "arguments": {"name": "Ada"}})
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        assert "task" not in created
        assert "result" not in created
        assert isinstance(created["ttlMs"], int)
        assert isinstance(created["pollIntervalMs"], int)
        task_id = created["taskId"]
        await probe.started.wait()  # the body runs although its request was answered
        working = await send("tasks/get", {"taskId": task_id})
        assert (working["status"], working["resultType"]) == ("working", "complete")
        assert "result" not in working
        assert "error" not in working
        probe.go.set()
        await trio.testing.wait_all_tasks_blocked()
        done = await send("tasks/get", {"taskId": task_id})
        assert done["status"] == "completed"
        assert done["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
        assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})
        assert done["createdAt"] == created["createdAt"]
        assert done["lastUpdatedAt"] >= created["lastUpdatedAt"]
    seen = recorder.validate()
    assert seen["CreateTaskResult"] == 1
    assert seen["GetTaskResult"] == 2
    assert seen["GetTaskRequest"] == 2


async def test_a_tool_error_completes_and_a_protocol_error_fails(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server()
    async with connected(server) as (_client, send):
        tool = await send("tools/call", {"name": "tool_error", "arguments": {}})
        broken = await send("tools/call", {"name": "protocol_error", "arguments": {}})
        await trio.testing.wait_all_tasks_blocked()
        completed = await send("tasks/get", {"taskId": tool["taskId"]})
        assert completed["status"] == "completed"
        assert completed["result"]["isError"] is True
        failed = await send("tasks/get", {"taskId": broken["taskId"]})
        assert failed["status"] == "failed"
        assert failed["error"] == {
            "code": -32603,
            "message": "Internal error: it broke",
            "data": {"why": "test"},
        }
        assert "result" not in failed
    assert recorder.validate()["GetTaskResult"] == 2


async def test_cancel_reaches_the_handler_and_only_that_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    async with connected(server) as (_client, send):
        first = await send("tools/call", {"name": "gated", "arguments": {"name": "a"}})
        second = await send("tools/call", {"name": "gated", "arguments": {"name": "b"}})
        await trio.testing.wait_all_tasks_blocked()
        ack = await send("tasks/cancel", {"taskId": first["taskId"]})
        assert set(ack) == {"resultType", "_meta"}
        assert ack["resultType"] == "complete"
        await trio.testing.wait_all_tasks_blocked()
        assert probe.cancelled == 1  # the handler saw its cancellation
        cancelled = await send("tasks/get", {"taskId": first["taskId"]})
        assert cancelled["status"] == "cancelled"
        still = await send("tasks/get", {"taskId": second["taskId"]})
        assert still["status"] == "working"
        probe.go.set()
        await trio.testing.wait_all_tasks_blocked()
        assert (await send("tasks/get", {"taskId": second["taskId"]}))["status"] == "completed"
        # cancelling an ended task is acknowledged and changes nothing
        again = await send("tasks/cancel", {"taskId": second["taskId"]})
        assert again["resultType"] == "complete"
        assert (await send("tasks/get", {"taskId": second["taskId"]}))["status"] == "completed"
        unknown = await error_of(send("tasks/cancel", {"taskId": "no-such-task"}))
        assert unknown.code == -32602
    assert recorder.validate()["CancelTaskResult"] == 2


async def test_input_required_partial_answers_then_completion(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server()
    async with connected(server) as (_client, send):
        created = await send("tools/call", {"name": "two_questions", "arguments": {}})
        task_id = created["taskId"]
        await trio.testing.wait_all_tasks_blocked()
        asking = await send("tasks/get", {"taskId": task_id})
        assert asking["status"] == "input_required"
        requests = asking["inputRequests"]
        assert len(requests) == 2
        assert {r["method"] for r in requests.values()} == {"elicitation/create"}
        by_message = {r["params"]["message"]: key for key, r in requests.items()}
        first, second = by_message["first?"], by_message["second?"]
        # a malformed answer to an outstanding key is refused, and nothing is applied
        bad = await error_of(
            send("tasks/update", {"taskId": task_id, "inputResponses": {first: {"x": 1}}})
        )
        assert bad.code == -32602
        ack = await send(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {
                    first: {"action": "accept", "content": {"a": 1}},
                    "never-issued": {"action": "cancel"},
                },
            },
        )
        assert ack["resultType"] == "complete"
        assert "status" not in ack
        await trio.testing.wait_all_tasks_blocked()
        partial = await send("tasks/get", {"taskId": task_id})
        assert partial["status"] == "input_required"
        assert list(partial["inputRequests"]) == [second]
        # an answered key is not outstanding any more: answering it again is ignored
        await send(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {first: {"action": "decline"}}},
        )
        await send(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {second: {"action": "decline"}}},
        )
        await trio.testing.wait_all_tasks_blocked()
        done = await send("tasks/get", {"taskId": task_id})
        assert done["status"] == "completed"
        assert done["result"]["content"][0]["text"] == "{'a': 1} None"
        # once ended, updates are acknowledged and ignored
        await send("tasks/update", {"taskId": task_id, "inputResponses": {}})
    seen = recorder.validate()
    assert seen["UpdateTaskRequest"] == 4
    assert seen["UpdateTaskResult"] == 4


async def test_mrtr_rounds_before_the_task_then_the_task_carries_the_answer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    async with connected(server) as (_client, send):
        call = {"name": "confirm_then_run", "arguments": {}}
        first = await send("tools/call", call)
        assert first["resultType"] == "input_required"
        assert "taskId" not in first
        (key,) = first["inputRequests"]
        second = await send(
            "tools/call",
            {
                **call,
                "inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}},
                "requestState": first["requestState"],
            },
        )
        assert second["resultType"] == "task"
        assert "requestState" not in second
        assert "inputRequests" not in second
        assert second["statusMessage"] == "running"
        await trio.testing.wait_all_tasks_blocked()
        assert probe.task_ids == [second["taskId"]]
        with trio.move_on_after(2):
            await trio.sleep_forever()  # the task sleeps 1 s (autojump clock)
        done = await send("tasks/get", {"taskId": second["taskId"]})
        assert done["result"]["content"][0]["text"] == "ran for Alice (task: True)"
    seen = recorder.validate()
    assert seen["InputRequiredResult"] == 1
    assert seen["CreateTaskResult"] == 1


async def test_a_request_cancelled_before_its_handoff_cancels_the_body(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    async with connected(server) as (_client, send):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send, "tools/call", {"name": "held", "arguments": {}})
            await probe.started.wait()
            nursery.cancel_scope.cancel()  # the client gives up: notifications/cancelled
        await trio.testing.wait_all_tasks_blocked()
        assert probe.cancelled == 1
        assert len(server.tasks) == 0  # no task was ever created
        # without the extension the same tool runs in its request; begin_task() is False
        probe.go.set()
        plain = await send("tools/call", {"name": "held", "arguments": {}}, caps={})
        assert plain["content"][0]["text"] == "task: False"
        # with it, the hand-off answers CreateTaskResult
        created = await send("tools/call", {"name": "held", "arguments": {}})
        await trio.testing.wait_all_tasks_blocked()
        done = await send("tasks/get", {"taskId": created["taskId"]})
        assert done["result"]["content"][0]["text"] == "task: True"
    recorder.validate()  # every message sent (and request accepted) is schema-valid

"""The client side: both result shapes, polling at the server's pace, input, cancel."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trimcp
from trimcp.client import (
    TaskCalls,
    TaskCancelledError,
    client_responder,
    input_responder,
    stateless_requester,
)
from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext
from trimcp.protocol import CallToolResult, DetailedTask, ElicitParams, ElicitResult, Task
from trimcp.server import TaskStore
from trimcp.wire import Request

from ._support import connected, error_of, task_server


def _text(result: CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def test_both_shapes_and_polling_at_the_servers_pace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server(TaskStore(poll_interval=1))
    async with connected(server) as (client, _send):
        calls = TaskCalls(stateless_requester(client))
        plain = await calls.call_tool("plain", {"text": "a"})
        assert isinstance(plain, CallToolResult)
        assert _text(plain) == "plain a"
        task = await calls.call_tool("sleeper", {"seconds": 3.5})
        assert isinstance(task, Task)
        assert task.poll_interval_ms == 1000
        state = await calls.get(task.task_id)
        assert isinstance(state, DetailedTask)
        assert state.status == "working"
        start = trio.current_time()
        result = await calls.wait(task)
        assert _text(result) == "slept 3.5"
        assert 3.5 <= trio.current_time() - start <= 4.5
    polls = [m for m in recorder.received if isinstance(m, Request) and m.method == "tasks/get"]
    assert len(polls) == 1 + 5  # one get, then one poll a second until done (0,1,2,3,4 s)
    seen = recorder.validate()
    assert seen["GetTaskRequest"] == 6
    assert seen["CreateTaskResult"] == 1


async def test_input_requests_are_answered_once_through_the_handlers(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server()
    asked: list[str] = []

    async def elicit(params: ElicitParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"name": "Alice"})

    async with connected(server) as (client, _send):
        request = stateless_requester(client, capabilities={"elicitation": {}})
        calls = TaskCalls(request, respond=input_responder(elicitation=elicit))
        both = await calls.call_tool_result("two_questions")
        assert _text(both) == "{'name': 'Alice'} {'name': 'Alice'}"
        assert sorted(asked) == ["first?", "second?"]  # each key answered once
        asked.clear()
        # MRTR rounds in the call, then a task: the answer reaches the task's result
        composed = await calls.call_tool_result("confirm_then_run")
        assert _text(composed) == "ran for Alice (task: True)"
        assert asked == ["name?"]
    seen = recorder.validate()
    assert seen["InputRequiredResult"] == 1
    assert seen["UpdateTaskRequest"] >= 1


async def test_failed_cancelled_and_bounded_waits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    async with connected(server) as (client, _send):
        calls = TaskCalls(stateless_requester(client))
        broken = await calls.call_tool("protocol_error")
        assert isinstance(broken, Task)
        failure = await error_of(calls.wait(broken))
        assert (failure.code, failure.data) == (-32603, {"why": "test"})
        tool_error = await calls.call_tool_result("tool_error")
        assert tool_error.is_error is True
        held = await calls.call_tool("gated", {"name": "x"})
        assert isinstance(held, Task)
        with pytest.raises(trio.TooSlowError):
            await calls.wait(held, timeout=5)
        await calls.cancel(held.task_id)
        with pytest.raises(TaskCancelledError) as cancelled:
            await calls.wait(held.task_id)
        assert cancelled.value.task.status == "cancelled"
        assert probe.cancelled == 1
        # input needed and nobody to answer it: a clear error, not a hang
        asking = TaskCalls(stateless_requester(client, capabilities={"elicitation": {}}))
        no_responder = await error_of(asking.call_tool_result("two_questions"))
        assert no_responder.code == -32602
        assert "no responder" in no_responder.message
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_unknown_input_methods_are_refused_by_the_responder(
    autojump_clock: trio.testing.MockClock,
) -> None:
    respond = input_responder()
    refused = await error_of(respond("roots/list", {}))
    assert refused.code == -32601
    assert isinstance(refused, McpError)


async def test_the_clients_own_handlers_answer_task_input(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server()
    contexts: list[HandlerContext] = []

    async def elicit(ctx: HandlerContext, params: ElicitParams) -> ElicitResult:
        contexts.append(ctx)
        return ElicitResult(action="accept", content={"name": params.message})

    async with connected(server, elicitation=elicit) as (client, _send):
        calls = TaskCalls(stateless_requester(client), respond=client_responder(client))
        both = await calls.call_tool_result("two_questions")
        assert _text(both) == "{'name': 'first?'} {'name': 'second?'}"
        assert len(contexts) == 2
        assert all(ctx.closed for ctx in contexts)  # each lived as long as its answer
        refused = await error_of(client_responder(client)("sampling/createMessage", {}))
        assert refused.code == -32601  # no sampling handler was given
    assert recorder.validate()["UpdateTaskRequest"] == 1  # both answers in one update


async def test_a_stateless_client_calls_a_tool_as_a_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """With the default era a client speaks the stateless era to a trimcp server; the
    extension declared in one request's _meta survives the client's own stamping."""
    server = trimcp.Server("tasks-auto", version="1")

    @server.tool(task_support="optional")
    async def nap(seconds: float) -> str:
        await trio.sleep(seconds)
        return f"napped {seconds}"

    async with trimcp.open_client(server.in_memory()) as client:
        assert client.stateless
        calls = TaskCalls(stateless_requester(client), respond=client_responder(client))
        task = await calls.call_tool("nap", {"seconds": 2.0})
        assert isinstance(task, Task)
        assert _text(await calls.wait(task)) == "napped 2.0"

"""Negotiation: per request, stateless era only; -32021 where a task cannot be avoided."""

from __future__ import annotations

from typing import Any

import attrs
import trio
import trio.testing

import trimcp
from trimcp.dispatch import Middlewares
from trimcp.wire import Notification, Request

from ._support import EXT, WITHOUT_TASKS, connected, error_of, task_server

REQUIRED = {"requiredCapabilities": {"extensions": {EXT: {}}}}


async def test_discover_declares_the_extension_only_with_task_tools(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server()
    async with connected(server) as (_client, send):
        found = await send("server/discover", {})
        assert found["capabilities"]["extensions"] == {EXT: {}}
        assert "tasks" not in found["capabilities"]  # never the 2025-11-25 slot
    assert recorder.validate()["DiscoverResult"] == 1
    bare = trimcp.Server("bare")

    @bare.tool()
    async def echo(text: str) -> str:
        return text

    async with connected(bare) as (_client, send):
        assert "extensions" not in (await send("server/discover", {}))["capabilities"]


async def test_without_the_extension_tools_run_synchronously_or_need_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    probe.go.set()
    async with connected(server) as (_client, send):
        plain = await send(
            "tools/call", {"name": "gated", "arguments": {"name": "x"}}, caps=WITHOUT_TASKS
        )
        assert plain["resultType"] == "complete"
        assert "taskId" not in plain
        assert plain["content"] == [{"type": "text", "text": "Hello, x!"}]
        refused = await error_of(
            send("tools/call", {"name": "tool_error", "arguments": {}}, caps=WITHOUT_TASKS)
        )
        assert refused.code == -32021
        assert refused.data == REQUIRED
        for method, params in (
            ("tasks/get", {"taskId": "t"}),
            ("tasks/update", {"taskId": "t", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "t"}),
        ):
            gated = await error_of(send(method, params, caps=WITHOUT_TASKS))
            assert gated.code == -32021
            assert gated.data == REQUIRED
        # the next request declares it: that one call becomes a task
        created = await send("tools/call", {"name": "gated", "arguments": {"name": "y"}})
        assert created["resultType"] == "task"
        # and a request of the same client that does not, gets no task again
        again = await send(
            "tools/call", {"name": "gated", "arguments": {"name": "z"}}, caps=WITHOUT_TASKS
        )
        assert "taskId" not in again
    seen = recorder.validate()
    assert seen["JSONRPCErrorResponse"] == 4
    assert seen["CallToolResult"] == 2


async def test_the_extension_gives_no_tasks_to_sync_tools_or_removed_methods(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, _probe = task_server()
    async with connected(server) as (_client, send):
        legacy = await send(
            "tools/call",
            {"name": "plain", "arguments": {"text": "a"}, "task": {"ttl": 60000}},
        )
        assert legacy["resultType"] == "complete"
        assert "taskId" not in legacy
        for method in ("tasks/result", "tasks/list"):
            assert (await error_of(send(method, {"taskId": "t"}))).code == -32601
        unknown = await error_of(send("tasks/get", {"taskId": "no-such-task"}))
        assert unknown.code == -32602
        assert (await error_of(send("tasks/get", {"taskId": 7}))).code == -32602
        bad = await error_of(send("tasks/update", {"taskId": "t", "inputResponses": []}))
        assert bad.code == -32602
        server.remove_tool("sleeper")  # a removed task tool is unknown, not a failed task
        gone = await error_of(send("tools/call", {"name": "sleeper", "arguments": {"seconds": 1}}))
        assert gone.code == -32602
        assert len(server.tasks) == 0
    recorder.validate()  # every message sent (and request accepted) is schema-valid


async def test_a_2025_11_25_session_never_gets_extension_tasks(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, _recorder, probe = task_server()
    probe.go.set()
    sent: list[Any] = []

    async def record(message: Any, call_next: Any) -> None:
        sent.append(message)
        await call_next(message)

    server.middlewares.server_send.add(record)

    async def declare_anyway(message: Any, call_next: Any) -> None:
        # the client lists the extension in initialize: under 2025-11-25 it means nothing
        if isinstance(message, Request) and message.method == "initialize":
            params = dict(message.params or {})
            params["capabilities"] = {**params["capabilities"], "extensions": {EXT: {}}}
            message = attrs.evolve(message, params=params)
        await call_next(message)

    middlewares = Middlewares()
    middlewares.client_send.add(declare_anyway)
    async with trimcp.open_client(
        server.in_memory(), protocol_version="2025-11-25", middlewares=middlewares, era="handshake"
    ) as client:
        assert client.protocol_version == "2025-11-25"
        (session,) = server.sessions
        assert session.state.client_capabilities.extensions == {EXT: {}}
        assert client.state.server_capabilities.extensions is None
        assert all("execution" not in t.to_wire("2025-11-25") for t in server.tools.ordered())
        result = await client.call_tool("gated", {"name": "old"})
        assert result.content[0].text == "Hello, old!"  # type: ignore[union-attr]
        # a required tool called without a core task: -32601, as 2025-11-25 says
        raw_call = client.request("tools/call", {"name": "tool_error", "arguments": {}})
        assert (await error_of(raw_call)).code == -32601
        # tasks/get and tasks/cancel are the core methods here: no such task
        for method in ("tasks/get", "tasks/cancel"):
            assert (await error_of(client.request(method, {"taskId": "t"}))).code == -32602
        assert (await error_of(client.request("tasks/update", {"taskId": "t"}))).code == -32601
    assert len(server.tasks) == 0
    assert not any(isinstance(m, Notification) and m.method == "notifications/tasks" for m in sent)

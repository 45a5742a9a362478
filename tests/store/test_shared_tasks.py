"""Tasks of both kinds seen, polled, answered and cancelled from any process."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.dispatch import McpError

from ..http_server._asgi import BASE, AsgiClient, rpc
from ..tasks._support import VERSION, WITH_TASKS, meta
from ._cluster import cluster, on
from ._services import RedisServer
from .test_shared_sessions import answer


async def create_task(client: AsgiClient, name: str) -> str:
    """Call tool ``name`` as a 2025-11-25 task; its id."""
    params = {"name": name, "arguments": {}, "task": {"ttl": 60_000}}
    created = await client.post(rpc(3, "tools/call", params))
    task_id: str = created.json["result"]["task"]["taskId"]
    return task_id


async def poll_status(client: AsgiClient, task_id: str, want: str) -> dict[str, Any]:
    with trio.fail_after(10):
        while True:
            got = await client.post(rpc(20, "tasks/get", {"taskId": task_id}))
            assert got.status == 200, got.body
            if got.json["result"]["status"] == want:
                return got.json["result"]  # type: ignore[no-any-return]
            await trio.sleep(0.02)


async def test_core_task_polled_listed_and_finished_from_another_process(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, state):
        client = await c.session()
        task_id = await create_task(client, "slow_task")
        seen = await on(client, c.apps[1]).post(rpc(4, "tasks/get", {"taskId": task_id}))
        assert seen.json["result"]["status"] == "working", seen.body
        listed = await client.post(rpc(5, "tasks/list"))
        assert [t["taskId"] for t in listed.json["result"]["tasks"]] == [task_id]
        state["release"].set()
        await poll_status(client, task_id, "completed")
        result = await client.post(rpc(6, "tasks/result", {"taskId": task_id}))
        assert result.json["result"]["content"][0]["text"] == "done on p0"


async def test_core_task_input_request_carried_by_tasks_result_on_another_process(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        task_id = await create_task(client, "ask_task")
        await poll_status(on(client, c.apps[1]), task_id, "input_required")
        waiting = client.start(
            "POST", rpc(7, "tasks/result", {"taskId": task_id}), client.headers()
        )
        with trio.fail_after(10):
            (request,) = await waiting.wait_message(1)
        assert request["method"] == "elicitation/create"
        assert request["id"] >> 32 == c.stores()[1].process  # carried by p1's request
        reply = await on(client, c.apps[0]).post(
            answer(request["id"], {"action": "accept", "content": {"name": "Ada"}})
        )
        assert reply.status == 202
        with trio.fail_after(10):
            await waiting.complete.wait()
        assert waiting.messages[-1]["result"]["content"][0]["text"] == (
            "p0 got accept: {'name': 'Ada'}"
        )


async def test_core_task_cancelled_from_another_process(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, state):
        client = await c.session()
        task_id = await create_task(client, "slow_task")
        cancelled = await on(client, c.apps[1]).post(rpc(8, "tasks/cancel", {"taskId": task_id}))
        assert cancelled.json["result"]["status"] == "cancelled"
        await poll_status(on(client, c.apps[0]), task_id, "cancelled")
        with trio.fail_after(10):  # the status may be stored before the tool sees it
            await state.setdefault("cancelled", trio.Event()).wait()
        assert state["cancelled_on"] == "p0"


def stateless(
    method: str, params: dict[str, Any], request_id: int = 1
) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method,
         "params": {**params, "_meta": meta(WITH_TASKS)}}
    ).encode()  # fmt: skip
    headers = {**BASE, "mcp-protocol-version": VERSION, "mcp-method": method}
    key = {"tools/call": "name", "tasks/get": "taskId", "tasks/cancel": "taskId"}.get(method)
    if key is not None:
        headers["mcp-name"] = params[key]
    return body, headers


async def test_extension_task_polled_and_cancelled_on_another_process(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, state):
        client = AsgiClient(c.apps[0], c.nursery)
        body, headers = stateless("tools/call", {"name": "slow_task", "arguments": {}})
        created = await client.request("POST", body, headers)
        assert created.json["result"]["resultType"] == "task", created.body
        task_id = created.json["result"]["taskId"]
        body, headers = stateless("tasks/get", {"taskId": task_id})
        seen = await on(client, c.apps[1]).request("POST", body, headers)
        assert seen.json["result"]["status"] == "working", seen.body
        body, headers = stateless("tasks/cancel", {"taskId": task_id})
        await client.request("POST", body, headers)
        with trio.fail_after(10):
            while state.get("cancelled_on") != "p0":  # noqa: ASYNC110 - relayed
                await trio.sleep(0.02)


async def test_listen_on_one_process_hears_a_change_made_on_another(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = AsgiClient(c.apps[1], c.nursery)
        body, headers = stateless(
            "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
        )
        listening = client.start("POST", body, headers)
        with trio.fail_after(10):
            await listening.wait_message(1)  # acknowledged
        c.servers[0].remove_tool("where")  # a change on p0 only
        with trio.fail_after(10):
            messages = await listening.wait_message(2)
        assert messages[1]["method"] == "notifications/tools/list_changed"
        listening.disconnect.set()


async def test_the_task_tables_public_async_apis_are_checkpoints() -> None:
    """Without a shared store the lookups answer from memory, and still yield."""
    server = trimcp.Server("checkpoints")
    store = server.tasks

    @server.tool()
    async def probe(ctx: trimcp.ToolContext) -> str:
        with trio.testing.assert_checkpoints(), pytest.raises(McpError):
            await store.lookup(ctx.handler, "no such task")
        with trio.testing.assert_checkpoints():
            assert await store.listed_everywhere(ctx.handler) == []
        return "ok"

    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        assert (await client.call_tool("probe", {})).content[0].text == "ok"  # type: ignore[union-attr]

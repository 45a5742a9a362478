"""Handshake-era sessions shared by processes: any process serves any request."""

from __future__ import annotations

import json
from typing import Any

import trio

from ..http_server._asgi import AsgiClient, rpc
from ._cluster import cluster, on
from ._services import RedisServer


def sse(client: AsgiClient, **extra: str) -> dict[str, str]:
    return client.headers(accept="text/event-stream", **extra)


def answer(request_id: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def call(name: str, request_id: int = 3) -> bytes:
    return rpc(request_id, "tools/call", {"name": name, "arguments": {}})


async def test_a_session_begun_on_one_process_is_served_by_another(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        listed = await on(client, c.apps[1]).post(rpc(2, "tools/list"))
        assert listed.status == 200, listed.body
        assert "where" in [t["name"] for t in listed.json["result"]["tools"]]
        called = await client.post(call("where"))
        assert called.json["result"]["content"][0]["text"] == "p1"
        assert called.headers["mcp-session-id"] == client.session_id


async def test_an_unknown_session_is_404_on_every_process(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = AsgiClient(c.apps[1], c.nursery)
        for unknown in ("x" * 32, "{x}:s", "a}b{c"):  # never a part of a key
            client.session_id = unknown
            reply = await client.post(rpc(2, "tools/list"))
            assert reply.status == 404
            assert reply.json["error"]["code"] == -32001


async def test_reverse_call_answered_through_another_process(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        running = client.start("POST", call("form", 5), client.headers())
        with trio.fail_after(10):
            (request,) = await running.wait_message(1)
        assert request["method"] == "elicitation/create"
        assert request["id"] >> 32 == c.stores()[0].process  # the id names the process
        reply = await on(client, c.apps[1]).post(
            answer(request["id"], {"action": "accept", "content": {"name": "Ada"}})
        )
        assert reply.status == 202, reply.body
        with trio.fail_after(10):
            await running.complete.wait()
        assert running.messages[-1]["result"]["content"][0]["text"] == (
            "p0 got accept: {'name': 'Ada'}"
        )


async def test_resume_on_another_process_replays_then_follows_live(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, state):
        client = await c.session()
        first = client.start("POST", call("poll", 7), client.headers())
        with trio.fail_after(10):
            await first.complete.wait()  # the tool closed its stream
        assert [m["params"]["data"] for m in first.messages] == ["before close"]
        resumed = on(client, c.apps[1]).start(
            "GET", b"", sse(client, last_event_id=first.event_ids[0])
        )
        with trio.fail_after(10):
            await resumed.wait_message(1)  # replayed from the store by the other process
        state["release"].set()
        with trio.fail_after(10):
            await resumed.complete.wait()
        messages = resumed.messages
        assert [m["params"]["data"] for m in messages[:-1]] == ["before close", "after close"]
        assert messages[-1]["id"] == 7
        assert messages[-1]["result"]["content"][0]["text"] == "finished on p0"
        again = await client.request(
            "GET", b"", sse(client, last_event_id=resumed.event_ids[0])
        )  # complete now: replay only, from a third attachment
        assert again.messages[-1]["id"] == 7


async def test_log_level_set_on_one_process_holds_on_another(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        await on(client, c.apps[0]).post(rpc(2, "tools/call", {"name": "where", "arguments": {}}))
        level = await on(client, c.apps[1]).post(rpc(3, "logging/setLevel", {"level": "warning"}))
        assert level.status == 200, level.body
        with trio.fail_after(10):
            while True:  # the replica on p0 hears of it by relay
                chatty = await on(client, c.apps[0]).post(call("chatty", 4))
                logs = [m["params"]["data"] for m in chatty.messages[:-1]]
                if logs == ["loud"]:
                    break
                await trio.sleep(0.01)


async def test_delete_on_one_process_ends_the_session_everywhere(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        await on(client, c.apps[1]).post(call("where"))
        assert len(c.apps[0].manager) == len(c.apps[1].manager) == 1
        deleted = await on(client, c.apps[1]).request("DELETE", b"", client.headers())
        assert deleted.status == 200
        with trio.fail_after(10):
            while len(c.apps[0].manager):  # noqa: ASYNC110 - the replica ends by relay
                await trio.sleep(0.01)
        for app in c.apps:
            gone = await on(client, app).post(call("where"))
            assert gone.status == 404


async def test_cancel_sent_to_another_process_reaches_the_request(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, state):
        client = await c.session()
        held = client.start("POST", call("hold", 9), client.headers())
        with trio.fail_after(10):
            await held.wait_message(1)
        cancel = rpc(None, "notifications/cancelled", {"requestId": 9, "reason": "enough"})
        sent = await on(client, c.apps[1]).post(cancel)
        assert sent.status == 202
        with trio.fail_after(10):
            await held.complete.wait()
            # the stream ends as the request is cancelled, before the tool has seen it
            await state.setdefault("cancelled", trio.Event()).wait()
        assert state["cancelled_on"] == "p0"
        assert all("result" not in m for m in held.messages)


async def test_the_get_stream_carries_what_any_process_sends_the_session(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        get = client.start("GET", b"", sse(client))  # held by p0
        with trio.fail_after(10):
            await get.started.wait()
        await on(client, c.apps[1]).post(call("where"))  # a replica on p1 too
        c.servers[1].remove_tool("where")  # a change on p1: told to the session once
        with trio.fail_after(10):
            (notice,) = await get.wait_message(1)
        assert notice["method"] == "notifications/tools/list_changed"
        assert get.event_ids[-1].startswith("0-")  # an event of the GET stream: resumable
        get.disconnect.set()
        c.servers[0].remove_tool("form")  # kept for the resume, wherever it lands
        resumed = on(client, c.apps[1]).start(
            "GET", b"", sse(client, last_event_id=get.event_ids[-1])
        )
        with trio.fail_after(10):
            (missed,) = await resumed.wait_message(1)
        assert missed["method"] == "notifications/tools/list_changed"
        resumed.disconnect.set()


async def test_cancelled_through_another_process_its_reverse_call_is_cancelled_first(
    redis_server: RedisServer, prefix: str
) -> None:
    """The cancel of a call waiting on a reverse call reaches the call's process by
    relay; the reverse call's own cancel goes out on the stream before it closes."""
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        running = client.start("POST", call("form", 11), client.headers())
        with trio.fail_after(10):
            (request,) = await running.wait_message(1)
        cancel = rpc(None, "notifications/cancelled", {"requestId": 11})
        assert (await on(client, c.apps[1]).post(cancel)).status == 202
        with trio.fail_after(10):
            await running.complete.wait()
        last = running.messages[-1]
        assert last["method"] == "notifications/cancelled"
        assert last["params"]["requestId"] == request["id"]

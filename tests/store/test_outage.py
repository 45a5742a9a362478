"""Redis going away and coming back: clear 503s with Retry-After, no hang, recovery."""

from __future__ import annotations

import json

import trio
from coredis.tokens import PureToken

from ..http_server._asgi import AsgiClient, rpc
from ._cluster import cluster, on
from ._services import RedisServer


async def test_unreachable_store_is_503_then_recovers(
    redis_server: RedisServer, prefix: str
) -> None:
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        redis_server.stop()
        with trio.fail_after(5):  # held here: it goes on, its streams not resumable
            going = await client.post(rpc(9, "tools/call", {"name": "chatty", "arguments": {}}))
        assert going.status == 200
        assert [m.get("method") for m in going.messages][-1] is None  # the result
        assert going.event_ids == []
        other = AsgiClient(c.apps[1], c.nursery)
        with trio.fail_after(5):  # one operation's bound, not a hang
            refused = await other.post(rpc(1, "initialize", _INIT))
        assert refused.status == 503
        assert refused.headers["retry-after"] == "1"
        assert refused.json["error"]["code"] == -32000
        with trio.fail_after(5):  # known unreachable now: refused at once
            again = await on(client, c.apps[1]).post(rpc(2, "tools/list"))
        assert again.status == 503
        redis_server.start()  # empty: its sessions are gone, new ones work
        with trio.fail_after(15):
            while True:
                fresh = await other.post(rpc(1, "initialize", _INIT))
                if fresh.status == 200:
                    break
                assert fresh.status == 503
                await trio.sleep(0.2)
        other.session_id = fresh.headers["mcp-session-id"]
        listed = await on(other, c.apps[0]).post(rpc(2, "tools/list"))
        assert listed.status == 200


_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "outage-test", "version": "1"},
}


async def test_a_cut_relay_reconnects_and_recovers_from_the_store(
    redis_server: RedisServer, prefix: str
) -> None:
    """Redis drops the relay subscriptions (as a failover would): each process
    resubscribes, lets go of its idle replicas (their records may have changed
    meanwhile) and keeps serving; relays work again."""
    async with cluster(redis_server.url, prefix) as (c, _state):
        client = await c.session()
        await on(client, c.apps[1]).post(rpc(2, "tools/list"))
        assert len(c.apps[1].manager) == 1
        store = c.stores()[1]
        await store.link.call(lambda r: r.client_kill(type_=PureToken.PUBSUB))
        with trio.fail_after(10):
            while len(c.apps[1].manager):  # noqa: ASYNC110 - the resync ends it
                await trio.sleep(0.05)
        again = await on(client, c.apps[1]).post(rpc(3, "tools/list"))
        assert again.status == 200  # restored from its record
        running = on(client, c.apps[0]).start(
            "POST", rpc(4, "tools/call", {"name": "form", "arguments": {}}), client.headers()
        )
        with trio.fail_after(10):
            (request,) = await running.wait_message(1)
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}
        await on(client, c.apps[1]).post(json.dumps(answer).encode())  # relayed to p0
        with trio.fail_after(10):
            await running.complete.wait()
        assert running.messages[-1]["result"]["content"][0]["text"] == "p0 got decline: None"

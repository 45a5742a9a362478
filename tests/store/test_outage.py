"""Redis going away and coming back: clear 503s with Retry-After, no hang, recovery."""

from __future__ import annotations

import trio

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

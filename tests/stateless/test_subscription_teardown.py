"""A subscription torn down while its last notice is still being written (stdio).

On a byte stream the listen handler may be inside a write, its notice on the way out,
when ``notifications/cancelled`` for it is read; it meets the cancellation only once
that write ends. A change published after the cancellation was read must not be
relayed then, even though another sender's write is about to go out and would carry
the notice along.
"""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing

import trimcp
from trimcp.transports import StreamChannel

from ..stdio._gate import GatedSendStream
from ._support import params

SUB = "io.modelcontextprotocol/subscriptionId"


async def _dynamic() -> str:
    return "dynamic"


async def test_no_notice_for_a_change_published_after_the_cancellation_was_read() -> None:
    server = trimcp.Server("teardown", version="1.0", declare_tools=True)
    out = GatedSendStream()
    to_server, server_in = trio.testing.memory_stream_one_way_pair()

    async def send(message: dict[str, Any]) -> None:
        await to_server.send_all(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await trio.testing.wait_all_tasks_blocked()

    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_channel, StreamChannel(out, server_in))
        listen = {"notifications": {"toolsListChanged": True}}
        await send({"id": "sub", "method": "subscriptions/listen", "params": params(listen)})
        out.shut()
        server.tool(name="first")(_dynamic)
        await trio.testing.wait_all_tasks_blocked()
        assert out.writing == 1  # the listener's notice of "first", held in the pipe
        await send({"method": "notifications/cancelled", "params": {"requestId": "sub"}})
        await send({"id": 1, "method": "tools/list", "params": params()})  # waits to write
        server.tool(name="second")(_dynamic)  # after the cancellation was read
        out.open.set()
        await trio.testing.wait_all_tasks_blocked()
        await to_server.aclose()
    messages = [json.loads(line) for line in b"".join(out.writes).splitlines()]
    tagged = [m for m in messages if (m.get("params") or {}).get("_meta", {}).get(SUB) == "sub"]
    assert [m["method"] for m in tagged] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",  # "first" only
    ]
    assert [m["id"] for m in messages if "id" in m] == [1]  # no response to "sub"
    assert [tool["name"] for tool in messages[-1]["result"]["tools"]] == ["first"]

"""Every public async API is a checkpoint, on its no-op paths too (Trio's rule).

A loop built on an API that returns without yielding cannot be cancelled: a tool
reporting progress nobody asked for, or logging below the client's level, would ignore
its request's cancellation for as long as it loops.
"""

from __future__ import annotations

from typing import Any

import trio
from trio.testing import assert_checkpoints

import trimcp
from trimcp.client import Elicitation
from trimcp.protocol import Root
from trimcp.wire import Response

from ._support import served


def _server(seen: dict[str, Any]) -> trimcp.Server:
    server = trimcp.Server("checkpoints")

    @server.tool()
    async def quiet(ctx: trimcp.ToolContext) -> str:
        # no progressToken, and the client asked for errors only
        with assert_checkpoints():
            await ctx.report_progress(0.5)
        with assert_checkpoints():
            await ctx.log("debug", "below the level")
        with assert_checkpoints():
            assert await ctx.begin_task() is False
        # a loop on the no-op paths still sees its cancellation
        with trio.CancelScope() as scope:
            scope.cancel()
            for _ in range(1000):
                await ctx.report_progress(1)
                await ctx.log("info", "again")
            seen["looped"] = True
        seen["cancel seen"] = scope.cancelled_caught
        return "ok"

    return server


async def test_server_side_no_op_paths_are_checkpoints() -> None:
    seen: dict[str, Any] = {}
    async with served(_server(seen)) as (peer, _session):
        reply = await peer.request(1, "logging/setLevel", {"level": "error"})
        assert isinstance(reply, Response)
        reply = await peer.request(2, "tools/call", {"name": "quiet"})
        assert isinstance(reply, Response), reply
        assert reply.result["content"][0]["text"] == "ok"
    assert seen == {"cancel seen": True}


async def test_client_side_no_op_paths_are_checkpoints() -> None:
    server = trimcp.Server("dual")

    @server.tool()
    async def noop() -> str:
        return "ok"

    elicitation = Elicitation(form=None)
    async with trimcp.open_client(
        server.in_memory(), era="stateless", roots=[Root(uri="file:///tmp")]
    ) as client:
        assert client.stateless
        with assert_checkpoints():
            await client.set_logging_level("error")  # kept for the next requests' _meta
        with assert_checkpoints():
            await client.send_roots_list_changed()  # the stateless era has no such notice
    await elicitation._complete("e-1")
    with assert_checkpoints():
        await elicitation.wait_complete("e-1")

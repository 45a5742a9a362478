"""A client that keeps reading a stream gets all of it, however fast the handler sends.

Sending on a session's stream never waits for the client (one that stalls loses its
stream, see ``test_resume``), but it is a checkpoint: a handler looping on notifications
lets the response write each as it comes, so the stream's queue holds a couple of them,
not the whole loop. Before, a loop of ``ctx.log`` over Streamable HTTP never yielded,
filled the queue before a byte of it was written and lost its stream (over HTTP+SSE,
its session).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import assert_checkpoints

import trimcp
from trimcp.transports.http import HttpServerLimits

from ._asgi import rpc, running
from ._fixture import make_server


def _sending_server() -> trimcp.Server:
    server = trimcp.Server("sending")

    @server.tool()
    async def sends(ctx: trimcp.ToolContext) -> str:
        sends: dict[str, Callable[[], Awaitable[None]]] = {
            "log": lambda: ctx.log("info", "a line"),
            "progress": lambda: ctx.report_progress(1, 2),
            "notify": lambda: ctx.notify("notifications/message", {"level": "info", "data": 1}),
        }
        missed = []
        for name, send in sends.items():
            try:
                with assert_checkpoints():
                    await send()
            except AssertionError:
                missed.append(name)
        return f"no checkpoint: {missed}" if missed else "ok"

    return server


async def test_sending_on_a_stream_is_a_checkpoint() -> None:
    async with running(_sending_server()) as client:
        await client.initialize()
        params = {"name": "sends", "arguments": {}, "_meta": {"progressToken": "p"}}
        call = await client.post(rpc(2, "tools/call", params))
        *notes, answer = call.messages
        assert answer["result"]["content"][0]["text"] == "ok"
        assert [note["method"] for note in notes] == [
            "notifications/message",
            "notifications/progress",
            "notifications/message",
        ]


@settings(max_examples=30, deadline=None)
@given(count=st.integers(1, 400), bound=st.integers(8, 64))
def test_a_reading_client_gets_every_notification(count: int, bound: int) -> None:
    async def run() -> None:
        limits = HttpServerLimits(stream_queue_events=bound)
        async with running(make_server(), limits=limits) as client:
            await client.initialize()
            params = {"name": "flood", "arguments": {"count": count}}
            call = await client.post(rpc(2, "tools/call", params))
            *notes, answer = call.messages
            assert answer["result"]["content"][0]["text"] == "flooded"
            assert [note["params"]["data"][100:] for note in notes] == [
                str(i) for i in range(count)
            ]

    trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))


async def test_a_reading_client_of_an_http_sse_stream_gets_a_flood_whole() -> None:
    from .test_legacy_sse import handshake
    from .test_legacy_sse import running as legacy_running

    limits = HttpServerLimits(stream_queue_events=16)
    async with legacy_running(limits=limits) as client:
        stream, endpoint = await handshake(client)
        flood = rpc(2, "tools/call", {"name": "flood", "arguments": {"count": 200}})
        assert (await client.post(endpoint, flood)).status == 202
        seen: list[Any] = []
        while not seen or seen[-1].get("id") != 2:
            seen.append(json.loads((await stream.event(2 + len(seen))).data))
        assert len(seen) == 201  # every line, then the answer: the session lived on
        assert seen[-1]["result"]["content"][0]["text"] == "flooded"

"""What a parked call keeps alive over Streamable HTTP: nothing it no longer needs.

A call whose answer is an SSE stream may wait there for as long as its handler runs;
each object its stream keeps is kept once per parked call. These tests park a few
calls against trimcp's own server (127.0.0.1) and look at the live objects.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from functools import partial
from types import CoroutineType
from typing import Any

import h11
import trio

import trimcp

PARKED = 5
WAIT = 20


def build(entered: list[int], all_parked: trio.Event) -> trimcp.Server:
    server = trimcp.Server("parked", version="1")

    @server.tool()
    async def park(ctx: trimcp.ToolContext) -> None:
        # A notification first: the answer becomes an SSE stream.
        await ctx.notify("notifications/message", {"level": "info", "data": "parked"})
        entered.append(1)
        if len(entered) == PARKED:
            all_parked.set()
        await trio.sleep_forever()

    return server


def chain(coro: Any) -> Iterator[str]:
    """The qualified names of the frames a coroutine waits through."""
    while coro is not None:
        yield getattr(coro, "__qualname__", type(coro).__name__)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)


def live(kind: type) -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, kind))


async def test_a_parked_sse_call_keeps_no_response_head() -> None:
    entered: list[int] = []
    all_parked = trio.Event()
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            serve = partial(trimcp.serve_http, build(entered, all_parked), port=0, engine="h11")
            port = await nursery.start(serve)
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                trimcp.open_client(trimcp.streamable_http(url), era="handshake") as client,
                trio.open_nursery() as callers,
            ):
                for _ in range(PARKED):
                    callers.start_soon(partial(client.call_tool, "park"))
                await all_parked.wait()
                await trio.testing.wait_all_tasks_blocked()
                # Each parked stream was answered with a head, read and checked
                # once: none of them is still held (at most the session's one
                # standalone GET stream's).
                assert live(h11.Response) <= 1
                # Each POST task waits for bytes straight from reading its answer,
                # and keeps no copy of the request it sent.
                coroutines = [o for o in gc.get_objects() if isinstance(o, CoroutineType)]
                post = "HttpClientChannel._post"
                posts = [list(chain(o)) for o in coroutines if o.__qualname__ == post]
                assert len(posts) >= PARKED
                for names in posts:
                    assert "HttpConnection._next_event" in names
                    assert names[names.index("HttpConnection._next_event") + 1] == "wait_readable"
                for coro in coroutines:
                    if coro.__qualname__ == "HttpClientChannel._post_once":
                        assert coro.cr_frame is not None
                        values = coro.cr_frame.f_locals.values()
                        assert not any(isinstance(value, bytes) for value in values)
                callers.cancel_scope.cancel()
            nursery.cancel_scope.cancel()

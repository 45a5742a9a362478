"""What a parked call keeps alive over Streamable HTTP: nothing it no longer needs.

A request whose handler waits keeps, on the server, its connection task's frames and
the objects of its response, and on the client its POST task and answer stream, for as
long as it waits: once per parked call. These tests park a few SSE calls (trimcp's
client against the h11 engine on 127.0.0.1) and look at what each end holds for them.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from types import CoroutineType
from typing import Any

import h11
import trio
import trio.testing

import trimcp
from trimcp.transports.http import _h11_head
from trimcp.transports.http._h11_conn import H11Connection
from trimcp.transports.http._request_stream import RequestStream
from trimcp.transports.http._sse_stream import Outbox

PARKED = 3
WAIT = 20
#: Frames of a parked request's connection task, from the task's own coroutine down
#: to Trio's wait: the task's and the engine's loop, the app, its POST handling
#: (two), the response pump, the watch for the client leaving, and Trio's five
#: (wait_readable and below).
MAX_FRAMES = 12


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


def live(kind: type) -> list[Any]:
    gc.collect()
    return [obj for obj in gc.get_objects() if isinstance(obj, kind)]


@asynccontextmanager
async def parked_calls() -> AsyncIterator[None]:
    """Serve (h11 engine), park :data:`PARKED` SSE calls, and yield once all wait."""
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
                yield
                callers.cancel_scope.cancel()
            nursery.cancel_scope.cancel()


async def test_a_parked_sse_request_keeps_no_more_than_it_needs() -> None:
    async with parked_calls():
        watching = [
            names
            for names in (
                list(chain(obj))
                for obj in live(CoroutineType)
                if obj.__qualname__ == "_serve_connection"
            )
            if "H11Connection._watch" in names
        ]
        assert len(watching) >= PARKED  # and the session's standalone GET stream
        for names in watching:
            assert len(names) <= MAX_FRAMES, names
        # Each response's head went out with its first event: its start message
        # (status, headers) is not kept.
        streaming = [c for c in live(H11Connection) if c.head_sent and not c.complete]
        assert len(streaming) >= PARKED
        assert all("headers" not in c.started for c in streaming if c.started)
        # One local address for them all, not a copy per connection.
        assert len({id(c.server) for c in streaming}) == 1
        # No wake-up event while the pump waits on the client instead, and no set for
        # reverse calls that were never made.
        assert all(outbox._wakeup is None for outbox in live(Outbox))
        assert all(stream.reverse is None for stream in live(RequestStream))


async def test_a_parked_sse_call_keeps_no_more_than_it_needs() -> None:
    async with parked_calls():
        # Each parked stream was answered with a head, read and checked once: none of
        # them is still held (at most the session's one standalone GET stream's), but
        # for the server's bounded table of checked heads of whole answers.
        kept = set(map(id, _h11_head._stand_ins.values()))
        assert len(kept) <= _h11_head.WHOLE_HEADS
        assert len([r for r in live(h11.Response) if id(r) not in kept]) <= 1
        # Each POST task waits for bytes straight from reading its answer, and keeps
        # no copy of the request it sent.
        coroutines = live(CoroutineType)
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

"""Growth a hostile peer can cause stays inside the documented limits.

A peer that sends but never reads, floods of change notifications, detached work and
requests cancelled before they start: each is bounded, and the bound is the one the
README's limits table names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from trimcp.dispatch import Registry
from trimcp.nursery import (
    SERVER_BUSY,
    BackgroundContext,
    BackgroundLimitError,
    HandlerContext,
    Role,
    Session,
    SessionLimits,
    open_session,
)
from trimcp.transports import MemoryChannel, StreamChannel
from trimcp.transports._batch import DEFAULT_MAX_UNWRITTEN
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response

from ._support import Peer, live_tasks, raw_pair, raw_session


def _echo_registry() -> Registry:
    registry = Registry()

    async def echo(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return {"id": ctx.request_id}

    registry.add_request("echo", echo)
    return registry


@asynccontextmanager
async def _unread_session(
    registry: Registry, limits: SessionLimits
) -> AsyncIterator[tuple[Peer, Session]]:
    """A session whose peer never reads: one message fits in each direction."""
    to_session, session_in = trio.open_memory_channel[Message](1)
    session_out, from_session = trio.open_memory_channel[Message](1)
    peer = Peer(to_session, from_session)
    channel = MemoryChannel(session_out, session_in)
    async with open_session(channel, role=Role.SERVER, registry=registry, limits=limits) as session:
        yield peer, session


async def _send_until_blocked(peer: Peer, most: int) -> int:
    """Send requests while the session keeps reading them; how many it took."""
    for i in range(most):
        try:
            peer.send_channel.send_nowait(Request(id=i, method="echo"))
        except trio.WouldBlock:
            return i
        await trio.testing.wait_all_tasks_blocked()
    return most


async def test_a_peer_that_never_reads_stops_the_reader_at_the_in_flight_bounds() -> None:
    """Answers waiting to be written hold their in-flight slot: the reader stops at
    ``max_in_flight + max_queued`` instead of leaving a task per unread answer."""
    limits = SessionLimits(max_in_flight=4, max_queued=4)
    baseline = len(live_tasks())
    async with _unread_session(_echo_registry(), limits) as (peer, session):
        taken = await _send_until_blocked(peer, 500)
        # one answer in the outgoing buffer, 4 being written, one held by the admission
        # task, 4 queued, one in the reader's hands and one in the incoming buffer
        assert taken <= limits.max_in_flight + limits.max_queued + 4
        grown = len(live_tasks()) - baseline
        # the reader, the admission task, the session's own frame and 4 writers
        assert grown <= 3 + limits.max_in_flight
        assert session.in_flight + session.queued <= limits.max_in_flight + limits.max_queued
        session.close()


async def test_over_ndjson_a_peer_that_never_reads_is_bounded_too(autojump_clock: Any) -> None:
    # Answers go to the stream's writer task without waiting until DEFAULT_MAX_UNWRITTEN
    # bytes of them are queued; past that, each handler waits for its write, holding its
    # in-flight slot, and the reader stops.
    limits = SessionLimits(max_in_flight=4, max_queued=4)
    ours, theirs = trio.testing.lockstep_stream_pair()
    channel = StreamChannel(ours, ours, send_timeout=10_000)
    baseline = len(live_tasks())
    shortest = len(b'{"jsonrpc":"2.0","id":0,"result":{"id":0}}\n')
    most = DEFAULT_MAX_UNWRITTEN // shortest + 100
    async with open_session(
        channel, role=Role.SERVER, registry=_echo_registry(), limits=limits
    ) as session:
        sent = 0
        for i in range(most):
            with trio.move_on_after(1) as scope:
                await theirs.send_all(b'{"jsonrpc":"2.0","id":%d,"method":"echo"}\n' % i)
            if scope.cancelled_caught:
                break
            sent += 1
        assert sent < most
        await trio.testing.wait_all_tasks_blocked()
        # the reader, the admission task, the session's own frame, the writer task and
        # the handlers waiting for their writes
        assert len(live_tasks()) - baseline <= 4 + limits.max_in_flight
        session.close()


async def test_notify_soon_coalesces_and_is_bounded_behind_a_peer_that_never_reads() -> None:
    """A burst of list changes to a peer that reads nothing: one task writes them, a
    change already waiting is not queued twice, and the queue has a bound."""
    limits = SessionLimits(max_queued_notifications=8)
    baseline = len(live_tasks())
    async with _unread_session(Registry(), limits) as (_peer, session):
        for i in range(5000):
            session.notify_soon("notifications/tools/list_changed")
            session.notify_soon("notifications/resources/updated", {"uri": f"file:///{i % 50}"})
        await trio.testing.wait_all_tasks_blocked()
        grown = len(live_tasks()) - baseline
        assert grown <= 4  # reader, admission, the session's own frame, one writer
        assert session.queued_notifications <= limits.max_queued_notifications
        assert session.dropped_notifications > 0
        session.close()


async def test_notify_soon_sends_each_change_once_while_it_waits() -> None:
    peer, channel = raw_pair()
    async with open_session(channel, role=Role.SERVER, registry=Registry()) as session:
        for _ in range(100):
            session.notify_soon("notifications/tools/list_changed")
        session.notify_soon("notifications/resources/updated", {"uri": "a"})
        session.notify_soon("notifications/resources/updated", {"uri": "a"})
        session.notify_soon("notifications/resources/updated", {"uri": "b"})
        got = await peer.quiet_drain()
        assert [(m.method, m.params) for m in got] == [  # type: ignore[union-attr]
            ("notifications/tools/list_changed", None),
            ("notifications/resources/updated", {"uri": "a"}),
            ("notifications/resources/updated", {"uri": "b"}),
        ]
        assert session.dropped_notifications == 0
        # once written, a new change is announced again
        session.notify_soon("notifications/tools/list_changed")
        assert len(await peer.quiet_drain()) == 1


async def test_detached_work_is_capped_per_session() -> None:
    registry = Registry()
    release = trio.Event()

    async def background(_ctx: BackgroundContext) -> None:
        await release.wait()

    async def detach(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        ctx.detach_for_background(background)
        return {}

    registry.add_request("detach", detach)
    limits = SessionLimits(max_background=3)
    async with raw_session(registry, limits=limits) as (peer, session):
        for i in range(3):
            assert await peer.request(i, "detach") == Response(id=i, result={})
        refused = await peer.request(3, "detach")
        assert isinstance(refused, ErrorResponse)
        assert refused.error.code == SERVER_BUSY
        assert "max_background" in refused.error.message
        assert session.background_tasks == 3
        release.set()
        await peer.settle()
        assert session.background_tasks == 0
        assert await peer.request(4, "detach") == Response(id=4, result={})
        await peer.settle()
        release = trio.Event()
        for _ in range(3):
            session.spawn_background(background, BackgroundContext(session, None))
        with pytest.raises(BackgroundLimitError):
            session.spawn_background(background, BackgroundContext(session, None))


async def test_a_request_cancelled_while_queued_never_starts() -> None:
    registry = Registry()
    started: list[Any] = []
    gate = trio.Event()

    async def wait(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        started.append(ctx.request_id)
        await gate.wait()
        return {}

    registry.add_request("wait", wait)
    limits = SessionLimits(max_in_flight=1)
    async with raw_session(registry, limits=limits) as (peer, session):
        await peer.send(Request(id=1, method="wait"))
        await peer.send(Request(id=2, method="wait"))
        await peer.send(Request(id=3, method="wait"))
        await peer.settle()
        assert started == [1]
        assert session.queued == 2
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": 2}))
        await peer.settle()
        gate.set()
        answers = [await peer.receive() for _ in range(2)]
        assert sorted(a.id for a in answers) == [1, 3]  # type: ignore[union-attr]
        await peer.settle()
        assert started == [1, 3]  # 2 never ran, and got no response
        assert session.queued == session.in_flight == 0

"""Round trips of the Redis store's operations, counted by the real redis-server (its
``total_reads_processed``: one read per request the client wrote), and the TTL of
every key they leave.

The store is not run (no lease loop, no relay subscription): its client alone talks
to a redis-server only this module uses, so every read the server counts between two
probes is the operation's.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.store import RedisStore
from trimcp.store._redis_scripts import SCRIPTS
from trimcp.transports.http import Envelope, HttpServerLimits

from ._services import RedisServer

_stores = itertools.count(1)
_IDLE = 30.0


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[RedisStore]:
    """A store whose client is connected (and its scripts loaded), not running."""
    store = RedisStore(url, prefix=f"rt{next(_stores)}:")
    store.configure(HttpServerLimits(session_idle_timeout=_IDLE))
    async with store.link.client as client:
        for source in SCRIPTS:
            await client.script_load(source)
        yield store


async def _reads(store: RedisStore) -> int:
    info = await store.link.call(lambda c: c.info("stats"))
    return int(str(info["total_reads_processed"]))


async def round_trips(store: RedisStore, operation: Awaitable[Any]) -> int:
    """The requests ``operation`` sent (each probe counts its own read: minus one)."""
    before = await _reads(store)
    await operation
    return await _reads(store) - before - 1


async def untimed_keys(store: RedisStore) -> list[bytes]:
    """Keys of ``store`` without a TTL (each should have one)."""
    keys = await store.link.call(lambda c: c.keys(f"{store.prefix}*"))
    return [k for k in keys if await store.link.call(lambda c, k=k: c.pttl(k)) < 0]


async def test_the_probe_counts_one_round_trip_as_one(redis_server: RedisServer) -> None:
    async with connected(redis_server.url) as store:
        assert await round_trips(store, store.load_task("none")) == 1
        assert await round_trips(store, store.link.call(lambda c: c.ping())) == 1


Operation = Callable[[RedisStore], Awaitable[Any]]
_OPERATIONS: dict[str, Operation] = {
    "create_session": lambda s: s.create_session("s1", "owner"),
    "touch_session": lambda s: s.touch_session("s1"),
    "save_session": lambda s: s.save_session("s1", {"protocolVersion": "2025-06-18"}),
    "save_task": lambda s: s.save_task("t9", b"{}", 60_000, "listing"),
    "save_task unlisted": lambda s: s.save_task("t8", b"{}", 60_000, None),
    "task_index": lambda s: s.task_index("listing"),
    "end_session": lambda s: s.end_session("s1"),
    "live_sessions": lambda s: s.live_sessions(),
    "subscribe_uri": lambda s: s.subscribe_uri("s1", "file:///a", True),
    "unsubscribe_uri": lambda s: s.subscribe_uri("s1", "file:///a", False),
    "alive": lambda s: s.alive({1, 2, 3}),
}


@pytest.mark.parametrize("name", list(_OPERATIONS))
async def test_each_operation_is_one_round_trip(redis_server: RedisServer, name: str) -> None:
    async with connected(redis_server.url) as store:
        await store.create_session("s1", "owner")
        for i in range(20):  # a listing of many tasks is still read at once
            await store.save_task(f"t{i}", b"{}", 60_000, "listing")
        assert await round_trips(store, _OPERATIONS[name](store)) == 1
        assert await untimed_keys(store) == []


async def test_touch_renews_a_live_session_and_its_listing_only(
    redis_server: RedisServer,
) -> None:
    async with connected(redis_server.url) as store:
        await store.create_session("s1", None)
        listing, record = store.key("sessions"), store.session_prefix("s1") + "s"
        await store.link.call(lambda c: c.pexpire(record, 1000))
        await store.link.call(lambda c: c.pexpire(listing, 1000))
        await store.touch_session("s1")
        for key in (record, listing):
            assert await store.link.call(lambda c, k=key: c.pttl(k)) > 1000
        await store.touch_session("gone")  # never created: nothing renewed or listed
        assert await store.live_sessions() == ["s1"]
        assert await store.load_session("gone") is None
        await store.end_session("s1")
        await store.touch_session("s1")  # ended: not listed again
        assert await store.live_sessions() == []


async def test_alive_answers_from_the_leases(redis_server: RedisServer) -> None:
    async with connected(redis_server.url) as store:
        for process in (1, 3):
            key = store.key(f"proc:{process}")
            await store.link.call(lambda c, k=key: c.set(k, "lease", px=60_000))
        assert await store.alive({1, 2, 3, 4}) == {1, 3}
        assert await round_trips(store, store.alive(set())) == 0


async def test_ending_a_session_unlists_it_and_tells_every_process(
    redis_server: RedisServer,
) -> None:
    async with connected(redis_server.url) as store:
        await store.create_session("s1", None)
        await store.create_session("s2", None)
        await store.events("s1").opened("1.1.1", (5,))
        async with store.link.client.pubsub(channels=[store.key("all")]) as pubsub:
            await store.end_session("s1")
            with trio.fail_after(5):
                async for message in pubsub:
                    if message["type"] == "message":
                        break
        assert Envelope.decode(message["data"]) == Envelope("bye", "s1")
        assert await store.live_sessions() == ["s2"]
        assert not await store.link.call(lambda c: c.keys(store.session_prefix("s1") + "*"))


async def test_save_session_gives_an_expired_record_a_ttl(redis_server: RedisServer) -> None:
    async with connected(redis_server.url) as store:
        await store.create_session("s1", None)
        record = store.session_prefix("s1") + "s"
        await store.link.call(lambda c: c.delete([record]))  # expired meanwhile
        await store.save_session("s1", {"level": "debug"})
        assert 0 < await store.link.call(lambda c: c.pttl(record)) <= _IDLE * 1000


async def test_task_index_keeps_the_order_and_unlists_expired_mirrors(
    redis_server: RedisServer,
) -> None:
    async with connected(redis_server.url) as store:
        for i in range(5):
            await store.save_task(f"t{i}", f"doc{i}".encode(), 60_000, "ix")
        gone = [store.key("t:t1"), store.key("t:t3")]
        await store.link.call(lambda c: c.delete(gone))  # expired
        assert await store.task_index("ix") == [b"doc0", b"doc2", b"doc4"]
        listing = store.key("ti:ix")
        members = await store.link.call(lambda c: c.zrange(listing, 0, -1))
        assert list(members) == [b"t0", b"t2", b"t4"]
        assert await store.task_index("nothing") == []


_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "touch", "save", "expire", "task", "untask", "index"]),
        st.integers(0, 2),
    ),
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STEPS)
def test_any_sequence_is_one_round_trip_a_step_and_leaves_every_key_timed(
    redis_server: RedisServer, steps: list[tuple[str, int]]
) -> None:
    """Whatever came before (sessions live, ended or never made; tasks listed,
    expired or not), each operation is one round trip and no key lacks a TTL."""

    def operation(store: RedisStore, kind: str, n: int) -> Awaitable[Any]:
        sid, task = f"s{n}", f"t{n}"
        match kind:
            case "create":
                return store.create_session(sid, None)
            case "touch":
                return store.touch_session(sid)
            case "save":
                return store.save_session(sid, {"k": str(n)})
            case "expire":
                return store.link.call(lambda c: c.delete([store.session_prefix(sid) + "s"]))
            case "task":
                return store.save_task(task, task.encode(), 60_000, "ix")
            case "untask":
                return store.link.call(lambda c: c.delete([store.key(f"t:{task}")]))
        return store.task_index("ix")

    async def run() -> None:
        async with connected(redis_server.url) as store:
            listed: set[str] = set()
            for kind, n in steps:
                assert await round_trips(store, operation(store, kind, n)) == 1, kind
                assert await untimed_keys(store) == [], kind
                if kind == "task":
                    listed.add(f"t{n}")
                elif kind == "untask":
                    listed.discard(f"t{n}")
            docs = await store.task_index("ix")
            assert sorted(docs) == sorted(t.encode() for t in listed)

    trio.run(run)

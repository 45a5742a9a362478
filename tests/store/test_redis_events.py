"""The Redis event log: the bounds and answers of the in-memory store, keys with TTLs."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import given

from trimcp.cli import main
from trimcp.store import MemoryStore, RedisStore, open_store
from trimcp.transports.http import HttpServerLimits, MemoryEventStore

from ._services import RedisServer

_sessions = itertools.count(1)


@asynccontextmanager
async def running(url: str, prefix: str, **limits: Any) -> AsyncIterator[RedisStore]:
    store = RedisStore(url, prefix=prefix, op_timeout=2.0)
    store.configure(HttpServerLimits(**limits))
    async with trio.open_nursery() as nursery:
        await nursery.start(store.run)
        yield store
        nursery.cancel_scope.cancel()


async def new_session(store: RedisStore) -> str:
    session_id = f"s{next(_sessions)}"
    await store.create_session(session_id, None)
    return session_id


_LIMITS = {
    "replay_events": 4,
    "replay_bytes": 300,
    "replay_streams": 2,
    "replay_session_bytes": 500,
}
# (stream 1..3, payload size; 0 opens the stream)
_OPS = st.lists(st.tuples(st.integers(1, 3), st.integers(0, 320)), max_size=25)


@settings(max_examples=40, deadline=None)
@given(_OPS)
def test_redis_log_answers_as_the_memory_store_does(
    redis_server: RedisServer, ops: list[tuple[int, int]]
) -> None:
    """Differential property: the same writes give the same replays (events, gaps,
    unknown ids) from both stores, whatever the bounds evicted."""

    async def run() -> None:
        async with running(redis_server.url, "prop:", **_LIMITS) as store:
            events = store.events(await new_session(store))
            memory = MemoryEventStore(
                max_events=4, max_bytes=300, max_streams=2, max_session_bytes=500
            )
            issued: list[str] = []
            opened: set[int] = set()
            for stream, size in ops:
                name = f"9.1.{stream}"
                if size == 0 or stream not in opened:
                    opened.add(stream)
                    a = (await events.opened(name, (1,))).event_id
                    b = await memory.store(name, None)
                else:
                    payload = b"x" * size
                    a = await events.publish(name, payload, last=False)
                    b = await memory.store(name, payload)
                assert a == b
                issued.append(a)
            for event_id in [*issued, "9.1.1-999", "nope", "9.1.7-1"]:
                assert await events.replay_after(event_id) == await memory.replay_after(event_id)

    trio.run(run)


async def test_every_key_of_a_session_expires(redis_server: RedisServer, prefix: str) -> None:
    async with running(redis_server.url, prefix, session_idle_timeout=30) as store:
        session_id = await new_session(store)
        events = store.events(session_id)
        await events.opened("0", ())
        await events.publish("0", b"standalone", last=False)
        await events.opened("1.1.1", (5,))
        await events.publish("1.1.1", b"answer", last=True)
        keys = await store.link.call(lambda c: c.keys(f"{prefix}*"))
        assert len(keys) >= 6
        for key in keys:
            ttl = await store.link.call(lambda c, k=key: c.pttl(k))
            bound = 60_000 + 5_000 if key == f"{prefix}procs".encode() else 30_000
            assert 0 < ttl <= bound, key  # the counter outlives the sessions (twice)


async def test_ending_a_session_removes_its_keys(redis_server: RedisServer, prefix: str) -> None:
    async with running(redis_server.url, prefix) as store:
        session_id = await new_session(store)
        events = store.events(session_id)
        await events.opened("1.1.1", (5,))
        await events.publish("1.1.1", b"answer", last=True)
        await store.end_session(session_id)
        left = await store.link.call(lambda c: c.keys(f"{prefix}{{{session_id}}}*"))
        assert not left
        assert await store.load_session(session_id) is None


async def test_attach_holds_the_stream_and_relays_what_others_write(
    redis_server: RedisServer, prefix: str
) -> None:
    async with (
        running(redis_server.url, prefix) as writer,
        running(redis_server.url, prefix) as holder,
    ):
        seen: list[Any] = []
        got = trio.Event()

        def heard(envelope: Any) -> None:
            seen.append(envelope)
            if envelope.kind == "end":
                got.set()

        holder.on_envelope(heard)
        session_id = await new_session(writer)
        opened = await writer.events(session_id).opened("2.1.1", (7,))
        attached = await holder.events(session_id).attach(opened.event_id)
        assert attached is not None
        assert attached.live
        assert attached.producer == writer.process
        assert attached.request_ids == (7,)
        assert attached.previous == writer.process  # the writer held it until now
        await writer.events(session_id).publish("2.1.1", b'{"id":7,"result":{}}', last=True)
        with trio.fail_after(5):
            await got.wait()
        assert [(e.kind, e.stream) for e in seen if e.kind in ("ev", "end")] == [
            ("ev", "2.1.1"),
            ("end", "2.1.1"),
        ]
        again = await holder.events(session_id).attach(opened.event_id)
        assert again is not None
        assert not again.live
        assert [p for _, p in again.replay.events] == [b'{"id":7,"result":{}}']


async def test_a_process_lease_lapses_when_it_stops(redis_server: RedisServer, prefix: str) -> None:
    async with running(redis_server.url, prefix) as watcher:
        async with running(redis_server.url, prefix) as other:
            number = other.process
            assert await watcher.alive({number}) == {number}
        assert await watcher.alive({number}) == set()  # stopping gave its lease back


def test_store_urls_carry_the_store_options() -> None:
    store = open_store("redis://127.0.0.1:6379/2?prefix=app:&lease_ttl=1.5&op_timeout=0.5")
    assert isinstance(store, RedisStore)
    assert (store.prefix, store.lease_ttl, store.link.op_timeout) == ("app:", 1.5, 0.5)
    assert store.url == "redis://127.0.0.1:6379/2"
    assert isinstance(open_store("memory"), MemoryStore)
    assert isinstance(open_store(None), MemoryStore)
    with pytest.raises(ValueError, match="unknown store"):
        open_store("mongodb://x")
    with pytest.raises(ValueError, match="bad lease_ttl"):
        open_store("redis://127.0.0.1/0?lease_ttl=soon")


def test_serve_takes_a_store_only_with_http(capsys: pytest.CaptureFixture[str]) -> None:
    demo = str(Path(__file__).with_name("_e2e_server.py"))
    assert main(["serve", demo, "--store", "redis://127.0.0.1:1/0"]) == 2
    assert "--store applies to --http" in capsys.readouterr().err
    assert main(["serve", demo, "--http", "127.0.0.1:0", "--store", "nowhere"]) == 2
    assert "unknown store" in capsys.readouterr().err

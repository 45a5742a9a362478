"""Byte budgets of the HTTP server: the event store per session and per server, and output
(SSE queues, JSON answers, HTTP+SSE streams) per session and per server (B40, S9)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports.http import HttpServerLimits, MemoryEventStore
from trimcp.transports.http._budget import ByteBudget, EventBudget
from trimcp.transports.http._sse_stream import Outbox

from ._asgi import AsgiClient, Exchange, rpc, running
from ._fixture import make_server


# ---------------------------------------------------------------- the event store
async def test_session_budget_evicts_the_oldest_event_across_streams() -> None:
    store = MemoryEventStore(max_session_bytes=1000)
    early = await store.store("1", b"a" * 100)
    for _ in range(5):
        await store.store("1", b"a" * 100)
    second = [await store.store("2", b"b" * 100) for _ in range(6)]
    assert store.size <= 1000
    assert len(store) == 10  # the two oldest, both of stream 1, went
    gap = await store.replay_after(early)
    assert gap is not None
    assert gap.gap
    replay = await store.replay_after(second[0])
    assert replay is not None
    assert not replay.gap
    assert len(replay.events) == 5
    store.close()
    assert store.size == 0


async def test_the_server_budget_takes_from_the_largest_store() -> None:
    budget = EventBudget(2000)
    quiet = MemoryEventStore(budget=budget)
    hog = MemoryEventStore(budget=budget)
    kept = await quiet.store("1", b"q" * 500)
    for _ in range(40):
        await hog.store("1", b"h" * 100)
    assert budget.used <= 2000
    assert quiet.size == 500  # the hog evicted its own history, not the quiet one's
    # A small store asking under pressure takes from the largest, not from itself.
    await quiet.store("1", b"q" * 100)
    assert quiet.size == 600
    assert budget.used == quiet.size + hog.size <= 2000
    replay = await quiet.replay_after(kept)
    assert replay is not None
    assert not replay.gap
    hog.close()
    quiet.close()
    assert budget.used == 0


async def test_an_event_too_large_to_keep_leaves_a_gap_not_a_hole() -> None:
    store = MemoryEventStore(max_bytes=100)
    first = await store.store("1", b"x")
    await store.store("1", b"y" * 101)
    last = await store.store("1", b"z")
    gap = await store.replay_after(first)
    assert gap is not None
    assert gap.gap
    after = await store.replay_after(last)
    assert after is not None
    assert not after.gap


_OPS = st.lists(
    st.tuples(
        st.integers(0, 2),  # store
        st.sampled_from(["1", "2", "3"]),  # stream
        st.one_of(st.none(), st.integers(0, 400)),  # payload size (None: priming)
        st.booleans(),  # close the store afterwards (then it is replaced)
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(_OPS)
def test_stores_never_exceed_a_bound_nor_replay_with_a_hole(ops: list[Any]) -> None:
    """Invariant: bytes held stay within every budget, and a replay is either refused
    (a gap) or exactly the events issued after the id on that stream."""

    async def run() -> None:
        budget = EventBudget(1500)

        def fresh() -> MemoryEventStore:
            return MemoryEventStore(
                max_events=5, max_bytes=600, max_streams=2, max_session_bytes=900, budget=budget
            )

        stores = [fresh(), fresh(), fresh()]
        issued: list[list[tuple[str, str, bytes | None]]] = [[], [], []]
        for index, stream, size, close in ops:
            payload = None if size is None else bytes([65 + index]) * size
            event_id = await stores[index].store(stream, payload)
            issued[index].append((stream, event_id, payload))
            assert budget.used == sum(s.size for s in stores) <= 1500
            assert all(s.size <= 900 for s in stores)
            for n, store in enumerate(stores):
                for position, (stream_id, issued_id, _) in enumerate(issued[n]):
                    replay = await store.replay_after(issued_id)
                    assert replay is not None
                    assert replay.stream_id == stream_id
                    if replay.gap:
                        assert not replay.events
                        continue
                    later = [
                        (i, p)
                        for s, i, p in issued[n][position + 1 :]
                        if s == stream_id and p is not None
                    ]
                    assert list(replay.events) == later
            if close:
                stores[index].close()
                stores[index] = fresh()
                issued[index] = []
        for store in stores:
            store.close()
        assert budget.used == 0

    trio.run(run)


async def flood(client: AsgiClient, request_id: int, count: int) -> Exchange:
    call = client.start(
        "POST",
        rpc(request_id, "tools/call", {"name": "flood", "arguments": {"count": count}}),
        client.headers(),
    )
    with trio.fail_after(10):
        await call.complete.wait()
    assert call.headers["content-type"] == "text/event-stream"
    return call


async def test_flooding_sessions_are_held_to_their_event_budgets() -> None:
    limits = HttpServerLimits(replay_session_bytes=8192, replay_total_bytes=20000)
    async with running(make_server(), limits=limits) as client:
        app = client.app
        quiet = AsgiClient(app, client.nursery)
        await quiet.initialize()
        kept = await flood(quiet, 1, 2)
        hogs = []
        for _ in range(3):
            hog = AsgiClient(app, client.nursery)
            await hog.initialize()
            for request_id in range(1, 6):
                await flood(hog, request_id, 40)
            hogs.append(hog)
        stores = [c.store for c in app.manager._sessions.values()]
        assert all(isinstance(s, MemoryEventStore) and s.size <= 8192 for s in stores)
        assert app.event_budget.used <= 20000
        # The quiet session's history survived the floods of the others.
        replay = await quiet.request(
            "GET", b"", quiet.headers(accept="text/event-stream", last_event_id=kept.event_ids[0])
        )
        assert replay.status == 200
        assert [m["id"] for m in replay.messages if "id" in m] == [1]
        # A hog resuming from before what it lost gets a clear refusal, not a hole.
        first = await flood(hogs[0], 9, 1)
        await flood(hogs[0], 10, 60)
        gone = await hogs[0].request(
            "GET",
            b"",
            hogs[0].headers(accept="text/event-stream", last_event_id=first.event_ids[0]),
        )
        assert gone.status == 410
        assert gone.json["error"]["code"] == -32000
        assert "evicted" in gone.json["error"]["message"]
        for each in [quiet, *hogs]:
            assert (await each.request("DELETE", b"", each.headers())).status == 200
        assert app.event_budget.used == 0


# ---------------------------------------------------------------- output
async def test_outbox_holds_its_bytes_until_written_or_dropped() -> None:
    server = ByteBudget(100)
    session = ByteBudget(60, server)
    outbox = Outbox(max_events=10, max_bytes=1000, budget=session)
    assert outbox.put(b"x" * 30)
    assert outbox.put(b"y" * 30)
    assert session.used == 60
    assert not outbox.put(b"z")  # past the session's budget: the stream overflowed
    assert outbox.overflowed
    assert outbox.closed
    # Nothing was written yet, so the first item (a priming event) is kept: the client
    # learns an event id to resume from. The rest went back to the budget.
    assert len(outbox) == 1
    assert session.used == server.used == 30
    assert await outbox.get() == (None, b"x" * 30)
    assert await outbox.get() is None
    assert session.used == server.used == 0
    answer = Outbox(max_events=1, max_bytes=1, budget=session)
    assert answer.put(b"a" * 50, whole=True)  # a JSON answer skips the stream's bounds
    assert not answer.put(b"b" * 20, whole=True)  # ... but not the budget
    assert not answer.closed
    assert await answer.get() == (None, b"a" * 50)
    assert session.used == 50  # still being written
    answer.close()
    assert await answer.get() is None
    assert session.used == 0
    session.close()
    assert session.closed
    assert server.used == 0


async def _step(boxes: list[Outbox], index: int, op: str, size: int, budget: ByteBudget) -> None:
    """One operation on ``boxes[index]``: put, get (write), abort (and a fresh outbox in
    its place) or close; any other ``op`` does nothing here."""
    box = boxes[index]
    if op == "p":
        box.put(b"x" * size)
    elif op == "g" and len(box):
        await box.get()
    elif op == "a":
        box.abort()
        boxes[index] = Outbox(max_events=4, max_bytes=100, budget=budget)
    elif op == "c":
        box.close()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from("pgac"), st.integers(0, 50))))
def test_output_budgets_always_balance(ops: list[tuple[int, str, int]]) -> None:
    async def run() -> None:
        server = ByteBudget(200)
        session = ByteBudget(120, server)
        boxes = [Outbox(max_events=4, max_bytes=100, budget=session) for _ in range(3)]
        for index, op, size in ops:
            await _step(boxes, index, op, size, session)
            assert 0 <= session.used == server.used <= 120
        for box in boxes:
            box.abort()
        assert session.used == 0

    trio.run(run)


async def test_an_answer_over_the_output_budget_becomes_an_error() -> None:
    limits = HttpServerLimits(output_session_bytes=4096)
    async with running(make_server(), limits=limits) as client:
        await client.initialize()
        big = rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "x" * 10000}})
        reply = await client.post(big)
        assert reply.status == 200
        assert reply.json["id"] == 2
        assert reply.json["error"]["code"] == -32000
        assert "output budget" in reply.json["error"]["message"]
        small = rpc(3, "tools/call", {"name": "echo", "arguments": {"text": "fine"}})
        assert (await client.post(small)).json["result"]["content"][0]["text"] == "fine"
        assert client.app.manager.output.used == 0


async def test_a_stalled_stream_is_closed_at_the_output_budget() -> None:
    limits = HttpServerLimits(output_session_bytes=16384, output_total_bytes=20000)
    async with running(make_server(), limits=limits) as client:
        await client.initialize()
        call = await client.stalled_call(2, "flood", {"count": 500})
        (channel,) = [c for c in client.app.manager._sessions.values()]
        assert not channel.in_flight(2)  # the tool ran to its end, never blocked
        assert client.app.manager.output.used <= 16384
        assert all(s.outbox is None for s in channel._live.values())  # closed, not queued
        call.disconnect.set()


async def test_a_legacy_stream_over_its_output_budget_ends_its_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    from .test_legacy_sse import LEGACY_INIT
    from .test_legacy_sse import running as legacy_running

    limits = HttpServerLimits(output_session_bytes=8192)
    async with legacy_running(make_server(), limits=limits) as client:
        stream = client.start("GET", "/sse", headers={"accept": "text/event-stream"})
        stalled = False
        original = stream.send

        async def stalls(message: Any) -> None:
            await original(message)
            if stalled and message["type"] == "http.response.body":
                await trio.sleep_forever()

        stream.send = stalls  # type: ignore[method-assign]
        endpoint = (await stream.event(0)).data
        assert (await client.post(endpoint, rpc(1, "initialize", LEGACY_INIT))).status == 202
        await stream.event(1)
        assert (await client.post(endpoint, rpc(None, "notifications/initialized"))).status == 202
        stalled = True
        call = rpc(2, "tools/call", {"name": "flood", "arguments": {"count": 200}})
        assert (await client.post(endpoint, call)).status == 202
        with trio.fail_after(5):
            await trio.testing.wait_all_tasks_blocked()
        assert client.app.legacy is not None
        assert len(client.app.legacy) == 1  # its stream is still being written ...
        channel = client.app.legacy.get(endpoint.rpartition("=")[2])
        assert channel is not None
        assert channel.closed  # ... but the session has ended
        assert client.app.manager.output.used <= 8192
        again = await client.post(endpoint, rpc(3, "ping"))
        assert again.status == 404
        await trio.sleep(limits.send_timeout + 1)  # the stalled write gives up
        assert not len(client.app.legacy)
        assert client.app.manager.output.used == 0


def test_a_full_server_budget_sheds_the_largest_stream_of_the_largest_session() -> None:
    server = ByteBudget(100)
    hog = ByteBudget(80, server)
    quiet = ByteBudget(80, server)
    stalled = Outbox(max_events=10, max_bytes=1000, budget=hog)
    assert stalled.put(b"p")  # its priming event, then a backlog nobody reads
    assert stalled.get  # (never drained)
    for _ in range(7):
        assert stalled.put(b"h" * 10)
    other = Outbox(max_events=10, max_bytes=1000, budget=hog)
    assert other.put(b"o" * 5)
    assert server.used == 76
    answer = Outbox(max_events=1, max_bytes=1, budget=quiet)
    assert answer.put(b"a" * 40, whole=True)  # fits only once the hog gives way
    assert stalled.overflowed  # the hog's largest stream was shed ...
    assert len(stalled) == 1  # ... keeping its priming event, so its client can resume
    assert not other.overflowed  # one stream was enough
    assert server.used == hog.used + quiet.used <= 100
    # The hog asking for more cannot take it from a smaller session: its stream overflows.
    assert not other.put(b"o" * 60)
    assert other.overflowed
    assert answer.held == 40
    hog.close()
    quiet.close()
    assert server.used == 0


async def test_unread_streams_of_one_client_do_not_keep_others_answers_out() -> None:
    limits = HttpServerLimits(output_session_bytes=16384, output_total_bytes=16000)
    async with running(make_server(), limits=limits) as client:
        await client.initialize()
        call = await client.stalled_call(2, "flood", {"count": 50})
        assert client.app.manager.output.used > 8000  # the stalled stream holds a lot
        other = AsgiClient(client.app, client.nursery)
        await other.initialize()
        text = "y" * 8000
        reply = await other.post(
            rpc(3, "tools/call", {"name": "echo", "arguments": {"text": text}})
        )
        assert reply.json["result"]["content"][0]["text"] == text
        call.disconnect.set()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 1), st.integers(0, 2), st.sampled_from("pgacx"), st.integers(0, 60)
        )
    )
)
def test_two_sessions_balance_against_a_smaller_server_budget(
    ops: list[tuple[int, int, str, int]],
) -> None:
    """Two sessions under a server budget smaller than theirs together: a take that fits
    at the top is counted there at once, one that does not sheds or fails, and at every
    step the server holds exactly what its open sessions hold, within every limit."""

    async def run() -> None:
        server = ByteBudget(150)
        sessions = [ByteBudget(120, server), ByteBudget(120, server)]
        boxes = [
            [Outbox(max_events=4, max_bytes=100, budget=session) for _ in range(3)]
            for session in sessions
        ]
        for which, index, op, size in ops:
            session = sessions[which]
            await _step(boxes[which], index, op, size, session)
            if op == "x" and not session.closed:  # the session ends
                for other in boxes[which]:
                    other.abort()
                session.close()
            open_used = sum(s.used for s in sessions if not s.closed)
            assert server.used == open_used <= 150
            assert all(0 <= s.used <= 120 for s in sessions)
        for row in boxes:
            for box in row:
                box.abort()
        assert server.used == 0

    trio.run(run)

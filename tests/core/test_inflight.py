"""The in-flight cap (backpressure, nothing lost) and duplicate in-flight ids."""

from __future__ import annotations

from typing import Any

import trio

from trimcp.dispatch import Registry
from trimcp.nursery import HandlerContext, SessionLimits
from trimcp.wire import INVALID_REQUEST, ErrorResponse, Request, Response

from ._support import no_leaked_tasks, raw_session


class Gates:
    """A ``wait`` method whose calls block until released, recording start order."""

    def __init__(self) -> None:
        self.started: list[Any] = []
        self.gates: dict[Any, trio.Event] = {}
        self.registry = Registry()
        self.registry.add_request("wait", self._wait)

    def gate(self, request_id: Any) -> trio.Event:
        return self.gates.setdefault(request_id, trio.Event())

    async def _wait(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        self.started.append(ctx.request_id)
        await self.gate(ctx.request_id).wait()
        return {"echo": (params or {}).get("n")}


def test_default_cap_is_one_hundred() -> None:
    assert SessionLimits().max_in_flight == 100


async def test_cap_reached_stops_reading_and_loses_nothing() -> None:
    gates = Gates()
    limits = SessionLimits(max_in_flight=2)
    async with no_leaked_tasks(), raw_session(gates.registry, limits=limits) as (peer, session):
        for i in range(5):
            await peer.send(Request(id=i, method="wait", params={"n": i}))
        await peer.settle()
        # Admitted in one step, in arrival order; their handlers then start
        # concurrently (Trio orders a scheduler batch at random).
        assert sorted(gates.started) == [0, 1]
        assert session.in_flight == 2
        gates.gate(1).set()
        assert await peer.receive() == Response(id=1, result={"echo": 1})
        await peer.settle()
        assert gates.started[2:] == [2]  # exactly one more once one finished
        assert session.in_flight == 2
        for i in range(5):
            gates.gate(i).set()
        answers = [await peer.receive() for _ in range(4)]
        assert sorted(a.id for a in answers) == [0, 2, 3, 4]  # type: ignore[union-attr]
        assert all(isinstance(a, Response) and a.result == {"echo": a.id} for a in answers)
        # Two slots freed in one step admit 3 and 4 together, as with 0 and 1.
        assert sorted(gates.started[:2]) == [0, 1]
        assert gates.started[2] == 2
        assert sorted(gates.started[3:]) == [3, 4]


async def test_the_reader_is_blocked_at_the_cap() -> None:
    # While the cap is reached nothing further is read: a ping that arrives after the
    # capped requests waits too, even though it would be answered at once.
    gates = Gates()
    registry = gates.registry

    async def ping(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return {}

    registry.add_request("ping", ping)
    async with raw_session(registry, limits=SessionLimits(max_in_flight=1)) as (peer, session):
        await peer.send(Request(id=1, method="wait"))
        await peer.send(Request(id=2, method="wait"))
        await peer.send(Request(id="p", method="ping"))
        assert await peer.quiet_drain() == []
        assert session.in_flight == 1
        gates.gate(1).set()
        assert await peer.receive() == Response(id=1, result={"echo": None})
        await peer.settle()
        assert gates.started == [1, 2]
        gates.gate(2).set()
        rest = [await peer.receive() for _ in range(2)]
        assert {m.id for m in rest} == {2, "p"}  # type: ignore[union-attr]


async def test_default_cap_holds_the_101st_request() -> None:
    gates = Gates()
    async with raw_session(gates.registry) as (peer, session):
        for i in range(101):
            await peer.send(Request(id=i, method="wait"))
        await peer.settle()
        assert len(gates.started) == 100
        assert session.in_flight == 100
        assert 100 not in gates.started
        gates.gate(50).set()
        assert (await peer.receive()).id == 50  # type: ignore[union-attr]
        await peer.settle()
        assert gates.started[-1] == 100
        for i in range(101):
            gates.gate(i).set()
        ids = {(await peer.receive()).id for _ in range(100)}  # type: ignore[union-attr]
        assert ids == set(range(101)) - {50}


async def test_duplicate_in_flight_id_is_rejected_and_first_is_unaffected() -> None:
    gates = Gates()
    async with raw_session(gates.registry) as (peer, session):
        await peer.send(Request(id=5, method="wait", params={"n": "first"}))
        await peer.settle()
        await peer.send(Request(id=5, method="wait", params={"n": "second"}))
        reply = await peer.receive()
        assert isinstance(reply, ErrorResponse)
        assert reply.id == 5
        assert reply.error.code == INVALID_REQUEST
        assert "already in flight" in reply.error.message
        assert gates.started == [5]  # the duplicate never ran
        assert session.in_flight == 1
        gates.gate(5).set()
        assert await peer.receive() == Response(id=5, result={"echo": "first"})
        # Reuse after completion is fine.
        gates.gates.pop(5)
        await peer.send(Request(id=5, method="wait", params={"n": "third"}))
        await peer.settle()
        gates.gate(5).set()
        assert await peer.receive() == Response(id=5, result={"echo": "third"})
        assert session.in_flight == 0


async def test_duplicate_string_id_and_distinct_int_id() -> None:
    gates = Gates()
    async with raw_session(gates.registry) as (peer, _session):
        await peer.send(Request(id="x", method="wait", params={"n": 1}))
        await peer.send(Request(id="x", method="wait", params={"n": 2}))
        dup = await peer.receive()
        assert isinstance(dup, ErrorResponse)
        assert dup.error.code == INVALID_REQUEST
        await peer.send(Request(id=0, method="wait", params={"n": 3}))
        await peer.settle()
        # Both run (the duplicate never does); admitted together, they start in
        # Trio's batch order.
        assert sorted(gates.started, key=str) == [0, "x"]
        gates.gate("x").set()
        gates.gate(0).set()
        answers = {m.id: m for m in [await peer.receive(), await peer.receive()]}  # type: ignore[union-attr]
        assert answers["x"] == Response(id="x", result={"echo": 1})
        assert answers[0] == Response(id=0, result={"echo": 3})


async def test_max_pending_makes_further_callers_wait() -> None:
    from trimcp.nursery import Role

    limits = SessionLimits(max_pending=1)
    async with raw_session(Registry(), role=Role.CLIENT, limits=limits) as (peer, session):
        results: list[Any] = []

        async def call(n: int) -> None:
            results.append(await session.request("work", {"n": n}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, 1)
            nursery.start_soon(call, 2)
            first = await peer.receive()
            assert isinstance(first, Request)
            assert await peer.quiet_drain() == []  # the second caller waits for a slot
            assert session.pending == 1
            await peer.send(Response(id=first.id, result={"n": 1}))
            second = await peer.receive()
            assert isinstance(second, Request)
            assert second.id != first.id
            await peer.send(Response(id=second.id, result={"n": 2}))
        assert sorted(r["n"] for r in results) == [1, 2]
        assert session.pending == 0


async def test_the_same_id_in_both_directions_does_not_collide() -> None:
    gates = Gates()
    async with raw_session(gates.registry) as (peer, session):
        async with trio.open_nursery() as nursery:
            results: list[Any] = []

            async def call() -> None:
                results.append(await session.request("outbound"))

            nursery.start_soon(call)
            outbound = await peer.receive()
            assert isinstance(outbound, Request)
            # The peer uses the very same id for a request of its own.
            await peer.send(Request(id=outbound.id, method="wait", params={"n": "in"}))
            await peer.settle()
            assert session.in_flight == 1
            assert session.pending == 1
            await peer.send(Response(id=outbound.id, result={"answer": "out"}))
        assert results == [{"answer": "out"}]
        assert session.in_flight == 1  # the inbound request is untouched
        gates.gate(outbound.id).set()
        assert await peer.receive() == Response(id=outbound.id, result={"echo": "in"})


async def test_answers_to_reverse_calls_are_read_while_the_cap_is_reached(
    autojump_clock: Any,
) -> None:
    registry = Registry()

    async def ask(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return await ctx.request("roots/list")

    registry.add_request("ask", ask)
    limits = SessionLimits(max_in_flight=1)
    async with raw_session(registry, limits=limits) as (peer, _session):
        await peer.send(Request(id=1, method="ask"))
        reverse = await peer.receive()
        assert isinstance(reverse, Request)
        await peer.send(Request(id=2, method="ask"))  # held at the cap
        start = trio.current_time()
        await peer.send(Response(id=reverse.id, result={"roots": []}))
        first = await peer.receive()
        assert first == Response(id=1, result={"roots": []})
        assert trio.current_time() - start < 1  # promptly, not after the 60 s timeout


class _Batches(trio.abc.Instrument):
    """Counts scheduler batches (one ``before_io_wait`` per pass of the run loop)."""

    def __init__(self) -> None:
        self.batches = 0

    def before_io_wait(self, timeout: float) -> None:
        self.batches += 1


async def test_a_burst_is_read_and_admitted_in_a_few_scheduler_batches() -> None:
    # The reader takes what is already queued without a checkpoint per message, and
    # the admission starts every request that has a slot in one step: a burst of 50
    # costs a handful of scheduler passes, not one or two per request.
    gates = Gates()
    async with raw_session(gates.registry) as (peer, _session):
        for i in range(50):
            peer.send_channel.send_nowait(Request(id=i, method="wait", params={"n": i}))
        counter = _Batches()
        trio.lowlevel.add_instrument(counter)
        try:
            await peer.settle()
        finally:
            trio.lowlevel.remove_instrument(counter)
        assert sorted(gates.started) == list(range(50))
        assert counter.batches <= 10, counter.batches
        for i in range(50):
            gates.gate(i).set()
        answers = [await peer.receive() for _ in range(50)]
        assert sorted(a.id for a in answers) == list(range(50))  # type: ignore[union-attr]

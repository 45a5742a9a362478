"""Responses waiting their eager rounds parked in an :class:`EagerLot`: resumed once by
their answer, released to watch for the client leaving once their rounds are up, out
of the lot when cancelled, and never left parked when the keeper ends."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports.http._asgi_io import pump
from trimcp.transports.http._eager import EAGER_ROUNDS, EagerLot
from trimcp.transports.http._sse_stream import Outbox

from .test_pump import _Asgi

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "40"))


class _Steps(trio.abc.Instrument):
    """Counts the scheduler steps of one task."""

    def __init__(self) -> None:
        self.task: trio.lowlevel.Task | None = None
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.steps += 1


def _outbox() -> Outbox:
    return Outbox(max_events=8, max_bytes=1 << 16)


def _answer(outbox: Outbox, body: bytes = b"{}") -> None:
    outbox.json = True
    outbox.put(body, whole=True)
    outbox.close()


async def _rounds(n: int) -> None:
    for _ in range(n):
        await trio.lowlevel.checkpoint()


async def test_a_parked_response_is_resumed_once_by_its_answer() -> None:
    lot = EagerLot()
    asgi = _Asgi(disconnect=False)
    outbox = _outbox()
    steps = _Steps()

    async def respond() -> None:
        steps.task = trio.lowlevel.current_task()
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5, eager=lot)

    async def answer_soon() -> None:
        await _rounds(EAGER_ROUNDS - 2)
        _answer(outbox)

    trio.lowlevel.add_instrument(steps)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(lot.run)
            async with trio.open_nursery() as request:
                request.start_soon(respond)
                request.start_soon(answer_soon)
            nursery.cancel_scope.cancel()
    finally:
        trio.lowlevel.remove_instrument(steps)
    assert steps.steps == 1  # after its start, only the answer's wake: no round polled
    assert asgi.receives == 0  # never watched for the client leaving
    assert asgi.sent[1]["body"] == b"{}"
    assert len(lot) == 0


async def test_without_a_running_keeper_a_response_polls_its_rounds() -> None:
    lot = EagerLot()  # never run
    asgi = _Asgi(disconnect=False)
    outbox = _outbox()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _rounds(EAGER_ROUNDS - 2))
        nursery.start_soon(lambda: _answer_after(outbox, EAGER_ROUNDS - 2))
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5, eager=lot)
    assert asgi.receives == 0
    assert len(lot) == 0


@asynccontextmanager
async def _running_lot() -> AsyncIterator[tuple[EagerLot, trio.Nursery]]:
    """A lot whose keeper runs in the nursery handed out (ended on leaving)."""
    lot = EagerLot()
    async with trio.open_nursery() as nursery:
        await nursery.start(lot.run)
        yield lot, nursery
        nursery.cancel_scope.cancel()


async def _answer_after(outbox: Outbox, rounds: int) -> None:
    await _rounds(rounds)
    _answer(outbox)


async def test_a_slow_answer_is_released_after_its_rounds_and_watched() -> None:
    asgi = _Asgi(disconnect=False)
    outbox = _outbox()
    async with _running_lot() as (lot, _):

        async def late() -> None:
            await trio.testing.wait_all_tasks_blocked()
            assert len(lot) == 0  # released, now watching
            assert asgi.receives == 1
            _answer(outbox, b"[]")

        async with trio.open_nursery() as request:
            request.start_soon(late)
            assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5, eager=lot)
    assert asgi.sent[1]["body"] == b"[]"


async def test_a_client_gone_during_a_slow_answer_ends_the_response() -> None:
    asgi = _Asgi(disconnect=True)
    async with _running_lot() as (lot, _):
        with trio.fail_after(5):
            assert await pump(_outbox(), asgi.receive, asgi.send, (), timeout=5, eager=lot) is False
    assert asgi.sent == []


async def test_a_response_cancelled_while_parked_leaves_the_lot() -> None:
    asgi = _Asgi(disconnect=False)
    outbox = _outbox()
    async with _running_lot() as (lot, nursery):
        with trio.CancelScope() as scope:
            nursery.start_soon(_cancel_when_parked, lot, scope)
            await pump(outbox, asgi.receive, asgi.send, (), timeout=5, eager=lot)
        assert scope.cancelled_caught
        assert len(lot) == 0
        assert outbox.waker is None
        _answer(outbox)  # an answer after the cancel wakes nobody
    assert asgi.sent == []


async def _cancel_when_parked(lot: EagerLot, scope: trio.CancelScope) -> None:
    while not len(lot):
        await trio.lowlevel.checkpoint()
    scope.cancel()


async def test_the_keeper_ending_releases_every_parked_response() -> None:
    lot = EagerLot()
    asgi = _Asgi(disconnect=True)
    outcomes: list[bool | None] = []

    async def respond() -> None:
        outcomes.append(await pump(_outbox(), asgi.receive, asgi.send, (), timeout=5, eager=lot))

    async with trio.open_nursery() as requests, trio.open_nursery() as keeper:
        await keeper.start(lot.run)
        for _ in range(3):
            requests.start_soon(respond)
        while len(lot) < 3:
            await trio.lowlevel.checkpoint()
        keeper.cancel_scope.cancel()  # the keeper ends: the three go on to watch
    assert outcomes == [False, False, False]
    assert asgi.receives == 3
    assert not lot.running
    assert len(lot) == 0


# One response's script: scheduler rounds before its answer (None: never; the client
# leaves), whether it is a stream (two items: a priming event, then the answer), and
# whether it is cancelled after some rounds (None: not).
_responses = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 2 * EAGER_ROUNDS)),
        st.booleans(),
        st.one_of(st.none(), st.integers(0, 2 * EAGER_ROUNDS)),
    ),
    min_size=1,
    max_size=6,
)


async def _play(script: list[tuple[int | None, bool, int | None]]) -> None:
    lot = EagerLot()
    results: list[object] = [None] * len(script)
    sent: list[list[MutableMapping[str, Any]]] = [[] for _ in script]

    async def respond(n: int, answer_after: int | None, stream: bool, cancel: int | None) -> None:
        outbox = _outbox()
        asgi = _Asgi(disconnect=answer_after is None)
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                if cancel is not None:
                    nursery.start_soon(_cancel_after, scope, cancel)
                if answer_after is not None:
                    nursery.start_soon(_produce, outbox, answer_after, stream)
                results[n] = await pump(outbox, asgi.receive, asgi.send, (), timeout=5, eager=lot)
                nursery.cancel_scope.cancel()
        if scope.cancelled_caught:
            results[n] = "cancelled"
        sent[n] = asgi.sent

    async with trio.open_nursery() as keeper:
        await keeper.start(lot.run)
        async with trio.open_nursery() as nursery:
            for n, (answer_after, stream, cancel) in enumerate(script):
                nursery.start_soon(respond, n, answer_after, stream, cancel)
        assert len(lot) == 0  # nothing is left parked
        keeper.cancel_scope.cancel()
    for (answer_after, _stream, _cancel), result, messages in zip(
        script, results, sent, strict=True
    ):
        if result == "cancelled":
            continue
        if answer_after is None:
            assert result is False  # the client left; nothing was written
            assert messages == []
        else:
            assert result is True  # answered, whole and once
            assert b"".join(m.get("body", b"") for m in messages[1:]).endswith(b"{}")


async def _cancel_after(scope: trio.CancelScope, rounds: int) -> None:
    await _rounds(rounds)
    scope.cancel()


async def _produce(outbox: Outbox, rounds: int, stream: bool) -> None:
    if stream:
        outbox.put(b"id: 1\ndata: \n\n", "1")  # the priming event first
        await _rounds(rounds)
        outbox.put(b"data: {}", "2")
        outbox.close()
        return
    await _rounds(rounds)
    _answer(outbox)


@settings(max_examples=EXAMPLES, deadline=None)
@given(_responses)
def test_every_parked_response_ends_answered_left_or_cancelled(
    script: list[tuple[int | None, bool, int | None]],
) -> None:
    trio.run(_play, script, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.parametrize("rounds", [0, 1, EAGER_ROUNDS - 1])
async def test_an_answer_within_the_rounds_is_never_watched(rounds: int) -> None:
    asgi = _Asgi(disconnect=False)
    outbox = _outbox()
    async with _running_lot() as (lot, _), trio.open_nursery() as request:
        request.start_soon(_answer_after, outbox, rounds)
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5, eager=lot)
    assert asgi.receives == 0

"""The session's deadline timer: calls bounded without a cancel scope of their own.

A call on a channel that can withdraw a queued send (``interrupt_send``) with no send
middleware and no progress to follow is bounded by the session's one timer. Its
deadline must hold wherever the call waits: for room in a full buffer (memory
backpressure), behind a write that is stuck in the pipe (stdio), or for the answer; a
message withdrawn that way is never written, and no ``notifications/cancelled`` follows
it. The heap keeps no more than twice the calls waiting.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from trimcp import RequestTimeoutError
from trimcp.dispatch import Registry
from trimcp.nursery import Role, open_session
from trimcp.transports import StreamChannel
from trimcp.wire import Request, Response

from ..stdio._gate import GatedSendStream
from ._support import raw_pair


async def _times_out(session: Any, method: str, timeout: float, out: list[str]) -> None:
    try:
        await session.request(method, timeout=timeout)
    except RequestTimeoutError:
        out.append(f"{method} timed out at {trio.current_time():g}")
    else:
        out.append(f"{method} answered at {trio.current_time():g}")


async def test_a_call_waiting_for_room_times_out_and_its_request_is_withdrawn(
    autojump_clock: Any,
) -> None:
    peer, channel = raw_pair(max_buffer=1)
    outcome: list[str] = []
    async with open_session(channel, role=Role.CLIENT, registry=Registry()) as session:
        assert session._timed_sends
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_times_out, session, "first", 100, outcome)
            await trio.testing.wait_all_tasks_blocked()  # its request fills the buffer
            nursery.start_soon(_times_out, session, "second", 5, outcome)
            await trio.sleep(10)
            assert outcome == ["second timed out at 5"]
            first = await peer.receive()
            assert isinstance(first, Request)
            assert first.method == "first"
            assert await peer.quiet_drain() == []  # "second" was never sent, nor cancelled
            await peer.send(Response(id=first.id, result={}))
    assert outcome == ["second timed out at 5", "first answered at 10"]
    assert session.pending == 0


async def test_a_call_queued_behind_a_stuck_write_times_out_and_its_line_is_withdrawn(
    autojump_clock: Any,
) -> None:
    out = GatedSendStream()
    out.shut()
    _feed, receive = trio.testing.memory_stream_pair()
    channel = StreamChannel(out, receive)  # type: ignore[arg-type]
    outcome: list[str] = []
    async with open_session(channel, role=Role.CLIENT, registry=Registry()) as session:
        assert session._timed_sends
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_times_out, session, "first", 100, outcome)
            await trio.testing.wait_all_tasks_blocked()
            assert out.writing == 1  # the first line is in the pipe
            nursery.start_soon(_times_out, session, "second", 5, outcome)
            await trio.sleep(10)
            assert outcome == ["second timed out at 5"]
            out.open.set()  # the first line goes out; the second never does
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
        session.close()
    written = b"".join(out.writes)
    assert b'"first"' in written
    assert b'"second"' not in written


async def test_a_call_answered_in_time_leaves_the_timer_nothing(autojump_clock: Any) -> None:
    peer, channel = raw_pair()
    async with open_session(channel, role=Role.CLIENT, registry=Registry()) as session:

        async def answer_all() -> None:
            while True:
                request = await peer.receive()
                assert isinstance(request, Request)
                await peer.send(Response(id=request.id, result={"n": request.id}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_all)
            for n in range(1000):
                assert await session.request("echo", timeout=1 + n % 7) == {"n": n}
            deadlines = session._deadlines
            assert deadlines._calls == {}
            assert len(deadlines._heap) <= 64  # stale entries are pruned
            await trio.sleep(10)  # the timer expires nothing that was answered
            assert await peer.quiet_drain() == []
            nursery.cancel_scope.cancel()


class _Answer:
    """A value in an answer that can be watched for being freed."""


async def test_an_answered_call_is_freed_with_its_answer_at_once(autojump_clock: Any) -> None:
    # The heap keeps deadlines and ids, never the calls: a stale entry (the call was
    # answered long before its deadline) must not keep the call and its answer alive
    # until the entry reaches the top. Freed by reference counting alone: no collection.
    import gc
    import weakref

    peer, channel = raw_pair()
    async with open_session(channel, role=Role.CLIENT, registry=Registry()) as session:
        answers: list[weakref.ref[_Answer]] = []

        async def answer_all() -> None:
            while True:
                request = await peer.receive()
                assert isinstance(request, Request)
                answer = _Answer()
                answers.append(weakref.ref(answer))
                await peer.send(Response(id=request.id, result={"value": answer}))

        gc.disable()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(answer_all)
                for _ in range(10):
                    result = await session.request("echo", timeout=60)
                    assert isinstance(result["value"], _Answer)
                    del result
                assert len(session._deadlines._heap) == 10  # stale, not yet pruned
                # All but the last: the session's reader holds the last message it read.
                assert [ref() for ref in answers[:-1]] == [None] * 9
                nursery.cancel_scope.cancel()
        finally:
            gc.enable()


@pytest.mark.parametrize("middleware", [False, True])
async def test_send_middleware_or_progress_bound_a_call_by_a_scope(middleware: bool) -> None:
    # The timer cannot break a wait inside middleware: with any, every call has a scope.
    from trimcp.dispatch import Middlewares

    middlewares = Middlewares()
    if middleware:

        @middlewares.client_send.add
        async def passing(message: Any, call_next: Any) -> None:
            await call_next(message)

    _peer, channel = raw_pair()
    async with open_session(
        channel, role=Role.CLIENT, registry=Registry(), middlewares=middlewares
    ) as session:
        assert session._timed_sends is not middleware
        session.close()

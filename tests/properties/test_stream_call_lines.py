"""Property: over a byte stream, a call's request line and its cancellation agree.

A session over :class:`~trimcp.transports.StreamChannel` queues its requests for the
stream's writer task without waiting; a call that ends (here: times out) before its
line was written takes the line back. Random scripts start calls with random timeouts,
let the peer answer each after a random delay or never, and stall the pipe towards
the peer at random times. Whatever the interleaving, for every call:

- it resolves once: answered (its answer came in time) or timed out (not before its
  deadline);
- an answered call's request reached the peer, and no cancellation for it did;
- a timed-out call's request either never reached the peer (withdrawn), or went into a
  write by the call's deadline (a line still queued then is taken back) and was
  followed by its ``notifications/cancelled``, unless the stalled pipe kept that out
  past its bound (``cancel_send_timeout``);
- a cancellation never names a request the peer did not see, and no request arrives
  twice;

and once the callers are done the session holds no call. Without the withdrawal, a
timed-out call's line queued behind a stalled write went out after its deadline.
"""

from __future__ import annotations

import json
import math
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.dispatch import Registry
from trimcp.nursery import Role, SessionLimits, open_session
from trimcp.transports import StreamChannel
from trimcp.wire import Response, encode

from ..stdio._gate import GatedSendStream
from .test_call_deadlines import EXAMPLES, calls, timed_call

# Calls as in test_call_deadlines: (start, timeout, answer delay or None). Deadlines fall
# on whole seconds, answers half a second after a request arrives, and stalls start and
# end a quarter past: no two of them at the same instant.
stalls = st.lists(st.tuples(st.integers(0, 10), st.integers(1, 6)), max_size=3)


class _Pipe(GatedSendStream):
    """The session's output: hands each write to the peer, with the time the writer
    took it, once the gate lets it through."""

    def __init__(self, deliver: trio.MemorySendChannel[tuple[float, bytes]]) -> None:
        super().__init__()
        self._deliver = deliver

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        started = trio.current_time()  # when the writer took these lines
        await super().send_all(data)
        self._deliver.send_nowait((started, bytes(data)))


class _Peer:
    """Reads the session's lines, answers requests after their delay, stalls the pipe."""

    def __init__(self, script: list[tuple[int, int, float | None]]) -> None:
        self.script = script
        deliver, self.delivered = trio.open_memory_channel[tuple[float, bytes]](math.inf)
        self.pipe = _Pipe(deliver)
        self.feed, self.receive = trio.testing.memory_stream_pair()
        self._writing = trio.Lock()
        self.seen: dict[int, int] = {}  # request id -> call
        #: ("request" | "cancel", call), in arrival order.
        self.events: list[tuple[str, int]] = []
        #: When the write carrying each call's request started.
        self.taken: dict[int, float] = {}

    async def read(self, nursery: trio.Nursery) -> None:
        buffer = b""
        async for started, data in self.delivered:
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self._take(json.loads(line), started, nursery)

    def _take(self, message: dict[str, Any], started: float, nursery: trio.Nursery) -> None:
        if message.get("method") == "notifications/cancelled":
            request_id = message["params"]["requestId"]
            assert request_id in self.seen, "a cancellation for a request never seen"
            self.events.append(("cancel", self.seen[request_id]))
            return
        n = int(message["method"].removeprefix("call"))
        assert message["id"] not in self.seen, "a request arrived twice"
        self.seen[message["id"]] = n
        self.events.append(("request", n))
        self.taken[n] = started
        delay = self.script[n][2]
        if delay is not None:
            nursery.start_soon(self._answer, message["id"], delay)

    async def _answer(self, request_id: int, delay: float) -> None:
        await trio.sleep(delay)
        async with self._writing:
            await self.feed.send_all(encode(Response(id=request_id, result={})) + b"\n")

    async def stall(self, at: int, length: int) -> None:
        await trio.sleep(at + 0.25)
        if self.pipe.open.is_set():
            self.pipe.shut()
            await trio.sleep(length)
            self.pipe.open.set()


async def _play(script: list[tuple[int, int, float | None]], pauses: list[tuple[int, int]]) -> None:
    peer = _Peer(script)
    channel = StreamChannel(peer.pipe, peer.receive)
    limits = SessionLimits()
    outcome: dict[int, tuple[str, float]] = {}
    async with (
        open_session(channel, role=Role.CLIENT, registry=Registry(), limits=limits) as session,
        trio.open_nursery() as peers,
    ):
        peers.start_soon(peer.read, peers)
        for at, length in pauses:
            peers.start_soon(peer.stall, at, length)
        async with trio.open_nursery() as callers:
            for n, (start, timeout, _delay) in enumerate(script):
                callers.start_soon(timed_call, session, n, start, timeout, outcome)
        await trio.testing.wait_all_tasks_blocked()
        assert session.pending == 0
        peers.cancel_scope.cancel()
    _check(script, outcome, peer, limits.cancel_send_timeout)


def _check(
    script: list[tuple[int, int, float | None]],
    outcome: dict[int, tuple[str, float]],
    peer: _Peer,
    cancel_bound: float,
) -> None:
    events = peer.events
    for n, (start, timeout, _delay) in enumerate(script):
        how, when = outcome[n]
        deadline = start + timeout
        requests = events.count(("request", n))
        cancels = events.count(("cancel", n))
        if how == "answered":
            assert when < deadline
            assert (requests, cancels) == (1, 0), n
            continue
        assert when >= deadline
        if not requests:
            assert not cancels, n  # withdrawn: nothing to cancel
            continue
        # Taken for writing by the deadline (a line still queued then is withdrawn) ...
        assert peer.taken[n] <= deadline, (n, peer.taken[n], deadline)
        # ... and followed by its cancellation, unless the pipe held that back past
        # its bound.
        if cancels:
            assert events.index(("request", n)) < events.index(("cancel", n))
        else:
            assert when >= deadline + cancel_bound, (n, when, events)


@settings(max_examples=EXAMPLES, deadline=None)
@given(calls, stalls)
def test_a_calls_request_line_and_its_cancellation_agree(
    script: list[tuple[int, int, float | None]], pauses: list[tuple[int, int]]
) -> None:
    trio.run(_play, script, pauses, clock=trio.testing.MockClock(autojump_threshold=0))

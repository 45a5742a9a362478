"""Stateful properties of a live client session (design.md invariants 3 and 8).

A real client session (``open_client``) faces a raw server peer over an unbounded
memory pair: callers make requests, the peer answers (or answers late, twice, for ids
nobody used), callers give up, virtual time moves, and the session ends either by the
peer hanging up or by the client leaving its ``open_client`` block. After every step:
each outbound request has resolved at most once, as the model says; a request given up
after it was written was followed by ``notifications/cancelled``; nobody waits past its
timeout; the pending table holds exactly the calls still waiting.

See ``test_session_machine`` for the server side and ``_harness`` for the Trio bridge.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from trimcp.client import open_client
from trimcp.dispatch import ConnectionClosedError, McpError, RequestTimeoutError
from trimcp.nursery import Session, SessionLimits
from trimcp.transports import MemoryChannel
from trimcp.wire import (
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)

from ._harness import CANCELLED, MACHINE_SETTINGS, PeerMachine, RawPeer, settle

# ---------------------------------------------------------------- the client side

CLIENT_TIMEOUT_S = 10.0


class _RawTransport:
    """A client transport whose server end is the machine's raw peer."""

    def __init__(self, peer: RawPeer) -> None:
        self.peer = peer

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MemoryChannel]:
        yield self.peer.channel


@dataclass
class Call:
    key: int
    start: float
    timeout: float
    scope: trio.CancelScope
    wire_id: RequestId | None = None
    #: What the model says happened: out | ok | err | cancelled | timeout | closed.
    status: str = "out"
    value: Any = None
    cancel_seen: bool = False


class ClientSessionMachine(PeerMachine):
    """Real client session, raw server peer: invariant 3 for outbound calls, and 8."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[int, Call] = {}
        self.by_wire: dict[RequestId, Call] = {}
        #: key -> outcomes the caller task recorded (a list, to catch double resolutions).
        self.outcomes: dict[int, list[str]] = {}
        self.dropped = 0
        self.closed_locally = False
        self.session: Session | None = None
        self.holder_done = False
        self.leave: trio.Event | None = None  # made in the Trio thread
        self.answers: list[Message] = []
        self.trio.call(self._start)

    async def _start(self) -> None:
        self.leave = trio.Event()
        started = trio.Event()

        async def hold() -> None:
            limits = SessionLimits(request_timeout=CLIENT_TIMEOUT_S)
            async with open_client(
                _RawTransport(self.peer), limits=limits, era="handshake"
            ) as client:
                self.session = client.session
                started.set()
                assert self.leave is not None
                await self.leave.wait()
            self.holder_done = True

        self.trio.nursery.start_soon(hold)
        await settle()
        (init,) = self.peer.drain()
        assert isinstance(init, Request), init
        assert init.method == "initialize", init
        self.peer.send(
            Response(
                id=init.id,
                result={
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                },
            )
        )
        await settle()
        assert started.is_set()
        (note,) = self.peer.drain()
        assert isinstance(note, Notification)
        assert note.method == "notifications/initialized"

    def _out(self) -> list[Call]:
        return [c for c in self.calls.values() if c.status == "out"]

    def absorb(self, messages: list[Message]) -> None:
        for message in messages:
            if isinstance(message, Request):
                params = message.params or {}
                call = self.calls[params["k"]]
                assert call.wire_id is None, (call, message)
                assert message.id not in self.by_wire, message
                call.wire_id = message.id
                self.by_wire[message.id] = call
            elif isinstance(message, Notification):
                assert message.method == CANCELLED, message
                call = self.by_wire[(message.params or {})["requestId"]]
                assert not call.cancel_seen, call
                call.cancel_seen = True
                if call.status == "out":
                    timed_out = self.now >= call.start + call.timeout
                    assert timed_out, ("cancelled a call nobody gave up on", call)
                    call.status = "timeout"
                else:
                    # A caller that gave up, or the client closing its own session.
                    assert call.status in ("cancelled", "closed-locally"), call
            else:
                # Answers to the peer's own requests (ping), checked by that rule.
                assert isinstance(message, Response | ErrorResponse), message
                self.answers.append(message)

    # -- rules ---------------------------------------------------------------------
    @precondition(lambda self: not self.ended)
    @rule(short=st.booleans())
    def make_call(self, short: bool) -> None:
        key = len(self.calls)
        timeout = 5.0 if short else CLIENT_TIMEOUT_S
        scope = trio.CancelScope()
        call = Call(key, self.now, timeout, scope)
        self.calls[key] = call
        self.outcomes[key] = []

        async def caller() -> None:
            session = self.session
            assert session is not None
            outcome = "cancelled"
            with scope:
                try:
                    result = await session.request(
                        "x/echo", {"k": key}, timeout=None if not short else timeout
                    )
                except RequestTimeoutError:
                    outcome = "timeout"
                except ConnectionClosedError:
                    outcome = "closed"
                except McpError as exc:
                    outcome = f"err:{exc.code}"
                else:
                    outcome = f"ok:{result.get('v')}"
            self.outcomes[key].append(outcome)

        self.step(lambda: self.trio.nursery.start_soon(caller))
        assert call.wire_id is not None, "the request was not written"
        assert self.outcomes[key] == []

    @precondition(lambda self: not self.ended and any(True for _ in self._out()))
    @rule(pick=st.integers(min_value=0), ok=st.booleans(), value=st.integers(0, 99))
    def peer_answers(self, pick: int, ok: bool, value: int) -> None:
        pool = self._out()
        call = pool[pick % len(pool)]
        assert call.wire_id is not None
        if ok:
            answer: Message = Response(id=call.wire_id, result={"v": value})
            call.status, call.value = "ok", f"ok:{value}"
        else:
            code = -32100 - value
            answer = ErrorResponse(id=call.wire_id, error=ErrorObject(code=code, message="no"))
            call.status, call.value = "err", f"err:{code}"
        assert self.step(lambda: self.peer.send(answer)) == []

    @precondition(
        lambda self: not self.ended and any(c.status != "out" for c in self.calls.values())
    )
    @rule(pick=st.integers(min_value=0))
    def peer_answers_late(self, pick: int) -> None:
        pool = [c for c in self.calls.values() if c.status != "out"]
        call = pool[pick % len(pool)]
        assert call.wire_id is not None
        self.dropped += 1
        assert self.step(lambda: self.peer.send(Response(id=call.wire_id, result={}))) == []

    @precondition(lambda self: not self.ended)
    @rule(ghost=st.one_of(st.integers(10**6, 10**7), st.text(min_size=1, max_size=5)))
    def unknown_response_id(self, ghost: RequestId) -> None:
        self.dropped += 1
        assert self.step(lambda: self.peer.send(Response(id=ghost, result={}))) == []

    @precondition(lambda self: not self.ended and any(True for _ in self._out()))
    @rule(pick=st.integers(min_value=0))
    def caller_gives_up(self, pick: int) -> None:
        pool = self._out()
        call = pool[pick % len(pool)]
        call.status = "cancelled"
        self.step(call.scope.cancel)
        assert call.cancel_seen, "no notifications/cancelled for a written request"

    @precondition(lambda self: not self.ended)
    @rule(n=st.integers(1, 1000))
    def peer_pings(self, n: int) -> None:
        self.answers = []
        self.step(lambda: self.peer.send(Request(id=f"p{n}", method="ping")))
        assert self.answers == [Response(id=f"p{n}", result={})], self.answers

    @precondition(lambda self: not self.ended)
    @rule(seconds=st.sampled_from([0.5, 4.0, 5.0, 9.0, 10.0, 30.0]))
    def advance_clock(self, seconds: float) -> None:
        self.step(lambda: self.trio.jump(seconds))
        for call in self._out():
            assert self.now < call.start + call.timeout, ("a call waits forever", call)

    @precondition(lambda self: not self.ended)
    @rule()
    def hang_up(self) -> None:
        self.ended = True
        out = self._out()
        for call in out:
            call.status = "closed"
        assert self.step(self.peer.eof) == [], "the client spoke after the peer hung up"
        self._check_closed()

    @precondition(lambda self: not self.ended)
    @rule()
    def client_closes(self) -> None:
        """Leave the ``open_client`` block with calls in flight."""
        self.ended = True
        self.closed_locally = True
        out = self._out()
        for call in out:
            call.status = "closed-locally"
        assert self.leave is not None
        self.step(self.leave.set)
        assert self.holder_done, "open_client did not return"
        # The peer may still be listening: it is told about every call given up.
        for call in out:
            assert call.cancel_seen, call
        self._check_closed()

    @precondition(lambda self: self.ended)
    @rule()
    def after_the_end(self) -> None:
        assert self.peer.drain() == []
        self._check_closed()

    def _check_closed(self) -> None:
        session = self.session
        assert session is not None
        assert session.is_closed
        assert session.pending == session.in_flight == session.background_tasks == 0

    # -- invariants ----------------------------------------------------------------
    @invariant()
    def each_call_resolved_once_as_modelled(self) -> None:
        for call in self.calls.values():
            got = self.outcomes[call.key]
            if call.status == "out":
                assert got == [], (call, got)
                continue
            assert len(got) == 1, (call, got)  # one resolution per outbound request
            expected = {
                "ok": call.value,
                "err": call.value,
                "cancelled": "cancelled",
                "timeout": "timeout",
                "closed": "closed",
                "closed-locally": "closed",
            }[call.status]
            assert got[0] == expected, (call, got)
            if call.status in ("timeout", "cancelled"):
                assert call.cancel_seen, call

    @invariant()
    def pending_table_matches(self) -> None:
        session = self.session
        assert session is not None
        assert session.pending == len(self._out())
        assert session.dropped_answers == self.dropped


ClientSessionMachine.TestCase.settings = MACHINE_SETTINGS
TestClientSession = ClientSessionMachine.TestCase

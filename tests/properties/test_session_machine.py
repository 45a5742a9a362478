"""Stateful properties of a live server session (design.md invariants 2, 3, 4 and 8).

A ``RuleBasedStateMachine`` drives a real :class:`~trimcp.server.Server` session from a
raw peer over an unbounded memory pair, one rule at a time, and checks every invariant
after every step. The server's tools do what the test says: park until released, make N
reverse calls at once, raise, fail with a JSON-RPC error. The peer sends requests,
cancellations, duplicate ids, answers (good, bad, late, for unknown ids), moves virtual
time, and finally hangs up.

Each rule runs as one coroutine in a Trio thread (see ``_harness``) and then *settles*
(every task blocked), so after each step the model knows exactly what the session must
have done. Time is virtual and moves only in ``advance_clock``, which makes every timeout
predictable. The client side is in ``test_client_session_machine``.

Cost: 40 examples by default; set ``TRIMCP_PROPERTY_EXAMPLES=<n>`` for a longer run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import trio
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from trimcp.dispatch import ConnectionClosedError, McpError, RequestTimeoutError
from trimcp.nursery import Session, SessionLimits
from trimcp.server import Server, ToolContext
from trimcp.wire import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)

from ._harness import CANCELLED, MACHINE_SETTINGS, PeerMachine, RecordingChannel, settle

SECRET = "hunter2-session-machine-secret"
FAIL_CODE = -32050
#: Outbound (reverse) request timeout and handler deadline of the server under test.
REQUEST_TIMEOUT_S = 10.0
HANDLER_TIMEOUT_S = 40.0
LIMITS = SessionLimits(
    max_in_flight=10_000,
    max_reverse_calls=10_000,
    request_timeout=REQUEST_TIMEOUT_S,
    handler_timeout=HANDLER_TIMEOUT_S,
)
TOOL_KINDS = ("park", "reverse", "raise", "fail", "ping", "unknown")


# ---------------------------------------------------------------- the server under test


@dataclass
class World:
    """What the tools record, shared with the model (lives in the Trio thread)."""

    timeline: list[tuple[str, Any]] = field(default_factory=list)
    gates: dict[RequestId, trio.Event] = field(default_factory=dict)
    #: (forward id, index) -> how that reverse call ended, as the tool saw it.
    reverse_outcomes: dict[tuple[RequestId, int], str] = field(default_factory=dict)
    #: forward id -> how its park handler ended.
    park_exits: dict[RequestId, str] = field(default_factory=dict)


async def one_reverse(world: World, ctx: ToolContext, fid: RequestId, index: int) -> None:
    """One reverse call from a ``reverse`` tool; records how it ended, exactly once."""
    key = (fid, index)
    outcome: str
    try:
        result = await ctx.request("ping", {"of": fid, "i": index})
    except RequestTimeoutError:
        outcome = "timeout"
    except ConnectionClosedError:
        outcome = "closed"
    except McpError as exc:
        outcome = f"err:{exc.code}"
    except trio.Cancelled:
        assert key not in world.reverse_outcomes, key
        world.reverse_outcomes[key] = "cancelled"
        raise
    else:
        outcome = f"ok:{result.get('v')}"
    assert key not in world.reverse_outcomes, key  # one resolution per call
    world.reverse_outcomes[key] = outcome


def build_server(world: World) -> Server:
    server = Server("machine", "1.0", limits=LIMITS)

    @server.tool()
    async def park(ctx: ToolContext) -> str:
        fid = ctx.request_id
        gate = world.gates.setdefault(fid, trio.Event())
        try:
            await gate.wait()
        except trio.Cancelled:
            world.park_exits[fid] = "cancelled"
            raise
        world.park_exits[fid] = "released"
        return "released"

    @server.tool()
    async def reverse(ctx: ToolContext, n: int) -> str:
        fid = ctx.request_id
        try:
            async with trio.open_nursery() as nursery:
                for index in range(n):
                    nursery.start_soon(one_reverse, world, ctx, fid, index)
        finally:
            world.timeline.append(("exit", fid))
        return json.dumps([world.reverse_outcomes[(fid, i)] for i in range(n)])

    @server.tool()
    async def explode() -> str:
        raise ValueError(f"database password is {SECRET}")

    @server.tool()
    async def refuse() -> str:
        raise McpError(FAIL_CODE, "refused")

    return server


# ---------------------------------------------------------------- the model


@dataclass
class Forward:
    id: RequestId
    kind: str
    n: int
    start: float
    status: str = "live"  # live | done | cancelled | closed
    released: bool = False
    reverse_ids: list[RequestId] = field(default_factory=list)
    dups: int = 0


@dataclass
class Reverse:
    id: RequestId
    forward: RequestId
    index: int
    sent: float
    status: str = "out"  # out | ok | err | cancelled | closed
    value: Any = None
    cancel_seen: bool = False
    #: Why it was cancelled towards the peer: "timeout" or "forward-cancelled".
    why: str | None = None


def _request_for(kind: str, request_id: RequestId, n: int) -> Request:
    if kind == "ping":
        return Request(id=request_id, method="ping")
    if kind == "unknown":
        return Request(id=request_id, method="no/such/method")
    name = {"park": "park", "reverse": "reverse", "raise": "explode", "fail": "refuse"}[kind]
    arguments: dict[str, Any] = {"n": n} if kind == "reverse" else {}
    return Request(
        id=request_id, method="tools/call", params={"name": name, "arguments": arguments}
    )


class ServerSessionMachine(PeerMachine):
    """A raw peer against a real server session; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.world = World()
        self.forwards: dict[RequestId, Forward] = {}
        self.reverses: dict[RequestId, Reverse] = {}
        self.next_id = 0
        self.dropped = 0
        self.session: Session | None = None
        self.serve_done = False
        self.trio.call(self._start)

    # -- plumbing ------------------------------------------------------------------
    async def _start(self) -> None:
        server = build_server(self.world)
        channel = RecordingChannel(self.peer.channel, self.world.timeline)

        async def serve(task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED) -> None:
            await server.serve_channel(channel, task_status=task_status)
            self.serve_done = True

        self.session = await self.trio.nursery.start(serve)
        self.peer.send(
            Request(
                id="init",
                method="initialize",
                params={
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "machine", "version": "1"},
                },
            )
        )
        await settle()
        (reply,) = self.peer.drain()
        assert isinstance(reply, Response), reply
        assert reply.id == "init", reply
        self.peer.send(Notification(method="notifications/initialized"))
        await settle()
        self.world.timeline.clear()

    def _live(self, kind: str | None = None) -> list[Forward]:
        return [
            f
            for f in self.forwards.values()
            if f.status == "live" and (kind is None or f.kind == kind)
        ]

    def _out(self) -> list[Reverse]:
        return [r for r in self.reverses.values() if r.status == "out"]

    # -- what the session sends ----------------------------------------------------
    def absorb(self, messages: list[Message]) -> None:
        """Check each message the session sent against the model and apply it."""
        for message in messages:
            if isinstance(message, Request):
                self._absorb_reverse_call(message)
            elif isinstance(message, Notification):
                assert message.method == CANCELLED, message
                params = message.params or {}
                rid = params.get("requestId")
                assert rid in self.reverses, message
                rev = self.reverses[rid]
                assert rev.status == "out", (rev, "cancelled after it resolved")
                assert not rev.cancel_seen, (rev, "cancelled twice")
                forward = self.forwards[rev.forward]
                timed_out = self.now >= rev.sent + REQUEST_TIMEOUT_S
                assert forward.status == "cancelled" or timed_out, (rev, forward)
                rev.cancel_seen = True
                rev.status = "cancelled"
                if forward.status == "cancelled":
                    rev.why = "forward-cancelled"
                elif self.now >= forward.start + HANDLER_TIMEOUT_S:
                    rev.why = "either"  # both deadlines passed in one jump
                else:
                    rev.why = "timeout"
            else:
                assert isinstance(message, Response | ErrorResponse), message
                self._absorb_answer(message)

    def _absorb_reverse_call(self, message: Request) -> None:
        assert message.method == "ping", message
        params = message.params or {}
        fid, index = params["of"], params["i"]
        forward = self.forwards[fid]
        assert forward.kind == "reverse", forward
        assert forward.status == "live", forward
        assert message.id not in self.reverses, message
        assert len(forward.reverse_ids) < forward.n
        forward.reverse_ids.append(message.id)
        self.reverses[message.id] = Reverse(message.id, fid, index, self.now)

    def _absorb_answer(self, message: Response | ErrorResponse) -> None:
        assert message.id in self.forwards, message
        forward = self.forwards[message.id]
        # A duplicate id is answered -32600 right away; the first request carries on.
        if isinstance(message, ErrorResponse) and forward.dups:
            assert message.error.code == INVALID_REQUEST, message
            forward.dups -= 1
            return
        assert forward.status == "live", (forward, "second answer or answer after cancel")
        forward.status = "done"
        kind = forward.kind
        if kind == "ping":
            assert message == Response(id=forward.id, result={}), message
        elif kind == "unknown":
            assert isinstance(message, ErrorResponse), message
            assert message.error.code == METHOD_NOT_FOUND
        elif kind == "fail":
            assert isinstance(message, ErrorResponse), message
            assert message.error.code == FAIL_CODE
        elif kind == "raise":
            assert isinstance(message, Response), message
            assert message.result.get("isError") is True
            assert SECRET not in json.dumps(message.result)
            assert "Traceback" not in json.dumps(message.result)
        elif kind == "park":
            if forward.released:
                assert isinstance(message, Response), message
                assert message.result["content"][0]["text"] == "released"
            else:
                assert self.now >= forward.start + HANDLER_TIMEOUT_S, (forward, message)
                assert isinstance(message, ErrorResponse), message
                assert message.error.code == REQUEST_TIMEOUT
        else:
            self._check_reverse_result(forward, message)

    def _check_reverse_result(self, forward: Forward, message: Response | ErrorResponse) -> None:
        if isinstance(message, ErrorResponse):
            # The handler deadline passed in the same jump as its reverse calls' deadlines.
            assert self.now >= forward.start + HANDLER_TIMEOUT_S, (forward, message)
            assert message.error.code == REQUEST_TIMEOUT, message
            return
        outcomes = json.loads(message.result["content"][0]["text"])
        assert len(forward.reverse_ids) == forward.n == len(outcomes)
        for rid in forward.reverse_ids:
            rev = self.reverses[rid]
            got = outcomes[rev.index]
            if rev.status == "ok":
                assert got == f"ok:{rev.value}", (rev, got)
            elif rev.status == "err":
                assert got == f"err:{rev.value}", (rev, got)
            else:
                assert rev.status == "cancelled", rev
                assert rev.why in ("timeout", "either"), rev
                assert got == "timeout", (rev, got)

    # -- rules ---------------------------------------------------------------------
    @precondition(lambda self: not self.ended)
    @rule(
        kind=st.sampled_from(TOOL_KINDS),
        n=st.integers(min_value=1, max_value=3),
        string_id=st.booleans(),
    )
    def send_request(self, kind: str, n: int, string_id: bool) -> None:
        self.next_id += 1
        request_id: RequestId = f"r{self.next_id}" if string_id else 1000 + self.next_id
        forward = Forward(request_id, kind, n, self.now)
        self.forwards[request_id] = forward
        self.step(lambda: self.peer.send(_request_for(kind, request_id, n)))
        if kind == "reverse":
            assert len(forward.reverse_ids) == n, forward  # all started at once
        elif kind != "park":
            assert forward.status == "done", forward  # answered at once
        else:
            assert forward.status == "live"

    @precondition(lambda self: not self.ended and self.forwards)
    @rule(pick=st.integers(min_value=0), only_live=st.booleans())
    def peer_cancel(self, pick: int, only_live: bool) -> None:
        pool = self._live() if only_live else list(self.forwards.values())
        if not pool:
            return
        forward = pool[pick % len(pool)]
        was_live = forward.status == "live"
        outstanding = [
            r for r in map(self.reverses.get, forward.reverse_ids) if r and r.status == "out"
        ]
        if was_live:
            forward.status = "cancelled"
        note = Notification(method=CANCELLED, params={"requestId": forward.id, "reason": "test"})
        self.step(lambda: self.peer.send(note))
        if was_live:
            # Invariant 4: every outstanding reverse call was cancelled towards the peer ...
            for rev in outstanding:
                assert rev.cancel_seen, rev
            # ... before the forward request's scope exited.
            if forward.kind == "reverse":
                self._check_cancels_precede_exit(forward, outstanding)
            if forward.kind == "park":
                assert self.world.park_exits.get(forward.id) == "cancelled"

    def _check_cancels_precede_exit(self, forward: Forward, outstanding: list[Reverse]) -> None:
        timeline = self.world.timeline
        exit_at = timeline.index(("exit", forward.id))
        for rev in outstanding:
            position = next(
                i
                for i, (what, message) in enumerate(timeline)
                if what == "sent"
                and isinstance(message, Notification)
                and message.method == CANCELLED
                and (message.params or {}).get("requestId") == rev.id
            )
            assert position < exit_at, (rev, forward)

    @precondition(lambda self: not self.ended and any(True for _ in self._out()))
    @rule(pick=st.integers(min_value=0), ok=st.booleans(), value=st.integers(0, 99))
    def answer_reverse_call(self, pick: int, ok: bool, value: int) -> None:
        pool = self._out()
        rev = pool[pick % len(pool)]
        if ok:
            answer: Message = Response(id=rev.id, result={"v": value})
            rev.status, rev.value = "ok", value
        else:
            # Clear of -32000 (read as "connection closed") and -32001 (timeout).
            code = -32100 - value
            answer = ErrorResponse(id=rev.id, error=ErrorObject(code=code, message="no"))
            rev.status, rev.value = "err", code
        self.step(lambda: self.peer.send(answer))

    @precondition(
        lambda self: not self.ended and any(r.status != "out" for r in self.reverses.values())
    )
    @rule(pick=st.integers(min_value=0))
    def answer_late(self, pick: int) -> None:
        """An answer for a reverse call already resolved (answered, timed out, cancelled)."""
        pool = [r for r in self.reverses.values() if r.status != "out"]
        rev = pool[pick % len(pool)]
        self.dropped += 1
        self.step(lambda: self.peer.send(Response(id=rev.id, result={"v": -1})))

    @precondition(lambda self: not self.ended)
    @rule(ghost=st.one_of(st.integers(10**6, 10**7), st.text(min_size=1, max_size=5)))
    def unknown_response_id(self, ghost: RequestId) -> None:
        self.dropped += 1
        assert self.step(lambda: self.peer.send(Response(id=ghost, result={}))) == []

    @precondition(lambda self: not self.ended and self._live("park"))
    @rule(pick=st.integers(min_value=0))
    def let_handler_finish(self, pick: int) -> None:
        pool = self._live("park")
        forward = pool[pick % len(pool)]
        forward.released = True
        self.step(lambda: self.world.gates[forward.id].set())
        assert forward.status == "done", forward

    @precondition(lambda self: not self.ended and self._live())
    @rule(pick=st.integers(min_value=0))
    def duplicate_id(self, pick: int) -> None:
        pool = self._live()
        forward = pool[pick % len(pool)]
        forward.dups += 1
        self.step(lambda: self.peer.send(Request(id=forward.id, method="ping")))
        assert forward.dups == 0, "the duplicate was not rejected at once"
        assert forward.status == "live"

    @precondition(lambda self: not self.ended)
    @rule(seconds=st.sampled_from([0.5, 3.0, 9.0, 10.0, 15.0, 45.0]))
    def advance_clock(self, seconds: float) -> None:
        self.step(lambda: self.trio.jump(seconds))
        for rev in self._out():
            assert self.now < rev.sent + REQUEST_TIMEOUT_S, ("reverse call never timed out", rev)
        for forward in self._live("park"):
            assert self.now < forward.start + HANDLER_TIMEOUT_S, (
                "handler never timed out",
                forward,
            )

    @precondition(lambda self: not self.ended)
    @rule()
    def hang_up(self) -> None:
        """EOF from the peer: the session must end completely (invariant 8)."""
        self.ended = True
        live = self._live()
        out = self._out()
        assert self.step(self.peer.eof) == [], "the session spoke after the peer hung up"
        session = self.session
        assert session is not None
        assert session.is_closed
        assert self.serve_done, "serve_channel did not return"
        assert session.in_flight == session.pending == session.background_tasks == 0
        for forward in live:
            forward.status = "closed"
            if forward.kind == "park":
                assert self.world.park_exits[forward.id] == "cancelled"
        for rev in out:
            outcome = self.world.reverse_outcomes[(rev.forward, rev.index)]
            assert outcome == "closed", (rev, outcome)  # invariant 3: failed, not left waiting
            rev.status = "closed"
        leftover = self.trio.call(self._other_tasks)
        assert leftover == [], leftover

    async def _other_tasks(self) -> list[str]:
        me = trio.lowlevel.current_task()
        return [t.name for t in self.trio.nursery.child_tasks if t is not me]

    @precondition(lambda self: self.ended)
    @rule()
    def after_the_end(self) -> None:
        assert self.peer.drain() == []

    # -- invariants ----------------------------------------------------------------
    @invariant()
    def tables_match_the_model(self) -> None:
        session = self.session
        assert session is not None
        live = self._live()
        out = self._out()
        assert session.in_flight == len(live), (session.in_flight, live)
        assert session.pending == len(out), (session.pending, out)
        assert session.dropped_answers == self.dropped
        assert session.background_tasks == 0

    @invariant()
    def every_reverse_call_resolved_once(self) -> None:
        for rev in self.reverses.values():
            outcome = self.world.reverse_outcomes.get((rev.forward, rev.index))
            if rev.status == "out":
                assert outcome is None, (rev, outcome)
            elif rev.status == "ok":
                assert outcome == f"ok:{rev.value}", (rev, outcome)
            elif rev.status == "err":
                assert outcome == f"err:{rev.value}", (rev, outcome)
            elif rev.status == "cancelled":
                expected = {
                    "forward-cancelled": {"cancelled"},
                    "timeout": {"timeout"},
                    "either": {"cancelled", "timeout"},
                }[rev.why or ""]
                assert outcome in expected, (rev, outcome)
            else:
                assert rev.status == "closed", rev
                assert outcome == "closed", (rev, outcome)

    @invariant()
    def cancelled_handlers_are_gone(self) -> None:
        for forward in self.forwards.values():
            if forward.status == "cancelled" and forward.kind == "park":
                assert self.world.park_exits.get(forward.id) == "cancelled", forward


ServerSessionMachine.TestCase.settings = MACHINE_SETTINGS
TestServerSession = ServerSessionMachine.TestCase

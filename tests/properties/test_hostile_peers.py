"""Clumsy and hostile peers against the structured-concurrency core (design invariants
2, 7, 8, 9, 10, 12).

Two properties, each over random scenarios Hypothesis draws and shrinks:

* **A raw NDJSON peer** (what a stdio client sends, over an in-memory byte stream with no
  buffer, so a peer that stops reading holds the server's writes). Every scenario opens
  with a pipelined handshake (``initialize``, ``initialized`` and requests in one
  write), then interleaves more requests, bursts, cancellations (some racing the
  answer), releases, stretches where the peer reads nothing, and possibly an early
  EOF. The handlers park, raise from their own nursery, report progress, log, detach
  work and announce list changes.
* **A trimcp client** whose callbacks call back into it (``on_tools_list_changed``
  lists the tools, ``on_log`` and ``on_progress`` ping), with calls cancelled while
  their answers travel.

After every step: the session's growth stays inside its limits (in flight, queued,
answers being written, detached work, queued notifications, and the number of tasks).
After every example: each accepted request had exactly one terminal outcome (an answer
or, once cancelled, possibly silence), errors raised in a handler's nursery arrived as
themselves, and the task count is back to where it started.

Time is a :class:`trio.testing.MockClock` that moves only when a step says so; each
example is one ``trio.run``. Cost: 60 examples each by default (a few seconds); set
``TRIMCP_PROPERTY_EXAMPLES=<n>`` for a longer run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.nursery import Session, SessionLimits
from trimcp.transports import StreamChannel

from ..core._support import live_tasks

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "0") or 0) or 60
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LIMITS = SessionLimits(
    max_in_flight=3,
    max_queued=2,
    max_background=2,
    max_queued_notifications=3,
    max_queued_callbacks=4,
    eof_grace=5.0,
)
CHILD_CODE = -32050
KINDS = (
    "quick",
    "park",
    "tool_error_child",
    "mcp_error_child",
    "progress",
    "log",
    "detach",
    "churn",
)


# ---------------------------------------------------------------- the server under test


@dataclass
class World:
    gates: dict[Any, trio.Event] = field(default_factory=dict)
    background_release: trio.Event = field(default_factory=trio.Event)
    #: Set at the end: parked requests that start from then on return at once.
    all_released: bool = False

    def gate(self, request_id: Any) -> trio.Event:
        gate = self.gates.setdefault(request_id, trio.Event())
        if self.all_released:
            gate.set()
        return gate


async def _raises(exc: Exception) -> None:
    await trio.lowlevel.checkpoint()
    raise exc


async def quick(n: int) -> str:
    return f"quick {n}"


async def tool_error_child(n: int) -> str:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep_forever)  # cancelled by its sibling's failure
        nursery.start_soon(_raises, trimcp.ToolError(f"child {n} says no"))
    return "unreachable"


async def mcp_error_child(n: int) -> str:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_raises, trimcp.McpError(CHILD_CODE, f"child {n} refused"))
    return "unreachable"


async def progress(ctx: trimcp.ToolContext, n: int) -> str:
    for step in range(1, 4):
        await ctx.report_progress(step, 3)
    return f"progress {n}"


async def log(ctx: trimcp.ToolContext, n: int) -> str:
    for line in range(3):
        await ctx.log("info", f"{n}.{line}")
    return f"log {n}"


def make_server(world: World) -> trimcp.Server:
    server = trimcp.Server("hostile", limits=LIMITS, declare_tools=True)
    for tool in (quick, tool_error_child, mcp_error_child, progress, log):
        server.tool()(tool)

    @server.tool()
    async def park(ctx: trimcp.ToolContext, n: int) -> str:
        await world.gate(ctx.request_id).wait()
        return f"park {n}"

    @server.tool()
    async def detach(ctx: trimcp.ToolContext, n: int) -> str:
        async def work(_bg: Any) -> None:
            await world.background_release.wait()

        ctx.detach_for_background(work)  # may be refused: max_background
        return f"detach {n}"

    @server.tool()
    async def churn(n: int) -> str:
        for _ in range(20):  # a storm of list changes for the notification queue
            server.tool(name="extra")(quick)
            server.remove_tool("extra")
        return f"churn {n}"

    return server


# ---------------------------------------------------------------- the raw peer


class Peer:
    """Writes in order from a task of its own (a pipelining peer never waits for the
    server to read), and reads only while ``reading``."""

    def __init__(self, stream: trio.StapledStream[Any, Any]) -> None:
        self.stream = stream
        self.reading = True
        self.resume = trio.Event()
        #: The scope of the read under way: stopping to read cancels it at once.
        self.read_scope = trio.CancelScope()
        self.received: list[dict[str, Any]] = []
        self.eof_sent = False
        self._out, self._in = trio.open_memory_channel[bytes | None](1000)

    def write(self, *messages: dict[str, Any]) -> None:
        """Queue ``messages`` as one write (several lines: a pipelined burst)."""
        self._out.send_nowait(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def end_input(self) -> None:
        """Queue the end of the server's input (a half-close: we still read)."""
        self._out.send_nowait(None)
        self.eof_sent = True

    async def write_forever(self) -> None:
        async for data in self._in:
            if data is None:
                await self.stream.send_eof()
                return
            await self.stream.send_all(data)

    async def read_forever(self) -> None:
        buffer = b""
        while True:
            while not self.reading:
                await self.resume.wait()
            data = None
            with trio.CancelScope() as self.read_scope:
                try:
                    data = await self.stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
            if data is None:
                continue  # stopped reading (a lockstep read cancelled takes nothing)
            if not data:
                return
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            self.received.extend(json.loads(line) for line in lines if line)


def initialize(request_id: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"},
        },
    }


def call(request_id: int, kind: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": kind,
            "arguments": {"n": request_id},
            "_meta": {"progressToken": f"p{request_id}"},
        },
    }


def cancel(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }


# ---------------------------------------------------------------- scenarios

Step = tuple[Any, ...]
_request = st.tuples(st.just("request"), st.sampled_from(KINDS))
_burst = st.tuples(st.just("burst"), st.lists(st.sampled_from(KINDS), min_size=2, max_size=6))
steps = st.one_of(
    _request,
    _request,
    _burst,
    _burst,
    st.tuples(st.just("cancel"), st.integers(0, 30)),
    st.tuples(st.just("race"), st.integers(0, 30)),  # release, then cancel at once
    st.tuples(st.just("release"), st.integers(0, 30)),
    st.tuples(st.just("stop_reading")),
    st.tuples(st.just("stop_reading")),
    st.tuples(st.just("resume_reading")),
    st.tuples(st.just("advance"), st.sampled_from([0.5, 3.0, 10.0])),
    st.tuples(st.just("eof")),
)
scenarios = st.tuples(
    st.lists(st.sampled_from(KINDS), max_size=6),  # pipelined with the handshake
    st.lists(steps, max_size=20),
)


@dataclass
class Model:
    kinds: dict[int, str] = field(default_factory=dict)
    #: Requests that may end in silence: cancelled by the peer, or still running when
    #: the grace after the end of input ran out.
    may_be_silent: set[int] = field(default_factory=set)
    next_id: int = 1
    eof_at: float | None = None

    def new(self, kind: str) -> int:
        request_id = self.next_id
        self.next_id += 1
        self.kinds[request_id] = kind
        return request_id

    def pick(self, index: int) -> int | None:
        ids = sorted(self.kinds)
        return ids[index % len(ids)] if ids else None


def check_bounds(session: Session, baseline: int) -> None:
    assert session.in_flight <= LIMITS.max_in_flight
    assert session.answering <= LIMITS.max_in_flight
    assert session.in_flight + session.answering <= LIMITS.max_in_flight
    # the queue, plus the one the admission task holds and the one the reader hands over
    assert session.queued <= LIMITS.max_queued + 2
    assert session.background_tasks <= LIMITS.max_background + LIMITS.max_in_flight
    assert session.queued_notifications <= LIMITS.max_queued_notifications
    # reader, admission, notifier, per request its task and at most two children, the
    # log drains of running requests, detached work, the peer's reader
    bound = 4 + 3 * LIMITS.max_in_flight + LIMITS.max_in_flight + LIMITS.max_background
    grown = len(live_tasks()) - baseline
    assert grown <= bound, grown


async def run_scenario(head: list[str], body: list[Step]) -> None:
    world = World()
    server = make_server(world)
    model = Model()
    ours, theirs = trio.testing.lockstep_stream_pair()
    channel = StreamChannel(ours, ours, send_timeout=1_000)
    peer = Peer(theirs)
    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, trio.testing.MockClock)
    baseline = len(live_tasks())
    async with trio.open_nursery() as nursery:
        try:
            session: Session = await nursery.start(server.serve_channel, channel)
            nursery.start_soon(peer.read_forever)
            nursery.start_soon(peer.write_forever)
            first = [call(model.new(kind), kind) for kind in head]
            peer.write(
                initialize("init"),
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                *first,
            )
            await trio.testing.wait_all_tasks_blocked()
            check_bounds(session, baseline)
            for step in body:
                if peer.eof_sent and step[0] in ("request", "burst", "cancel", "race", "eof"):
                    continue
                await play(step, model, peer, world, clock)
                await trio.testing.wait_all_tasks_blocked()
                check_bounds(session, baseline)
            # The end: read everything, let the parked requests go, end the input.
            peer.reading = True
            peer.resume.set()
            world.all_released = True
            for gate in list(world.gates.values()):
                gate.set()
            world.background_release.set()
            await trio.testing.wait_all_tasks_blocked()
            if not peer.eof_sent:
                peer.end_input()
            await trio.testing.wait_all_tasks_blocked()
            clock.jump(LIMITS.eof_grace + 1)
            await trio.testing.wait_all_tasks_blocked()
            assert session.is_closed, "the session outlived the end of its input"
            nursery.cancel_scope.cancel()
        finally:
            # A failed step must not leave a write of the server's hanging on us: the
            # clock stands still, so its send timeout would never come.
            with trio.CancelScope(shield=True):
                await theirs.aclose()
    check_outcomes(model, peer)
    await trio.testing.wait_all_tasks_blocked()
    assert len(live_tasks()) == baseline, "a task outlived the session"
    assert not server.sessions


async def play(
    step: Step, model: Model, peer: Peer, world: World, clock: trio.testing.MockClock
) -> None:
    action = step[0]
    if action == "request":
        kind = step[1]
        peer.write(call(model.new(kind), kind))
    elif action == "burst":
        peer.write(*[call(model.new(kind), kind) for kind in step[1]])
    elif action in ("cancel", "race", "release"):
        request_id = model.pick(step[1])
        if request_id is None:
            return
        if action in ("release", "race"):
            world.gate(request_id).set()
        if action in ("cancel", "race"):
            model.may_be_silent.add(request_id)
            peer.write(cancel(request_id))
    elif action == "stop_reading" and peer.reading:
        peer.reading = False
        peer.resume = trio.Event()
        peer.read_scope.cancel()
    elif action == "resume_reading":
        peer.reading = True
        peer.resume.set()
    elif action == "advance":
        clock.jump(step[1])
        if model.eof_at is not None and trio.current_time() - model.eof_at >= LIMITS.eof_grace:
            model.may_be_silent.update(model.kinds)  # the grace is over: the rest is cancelled
    elif action == "eof":
        peer.end_input()
        model.eof_at = trio.current_time()


def check_outcomes(model: Model, peer: Peer) -> None:
    answers: dict[Any, list[dict[str, Any]]] = {}
    for message in peer.received:
        if "id" in message and "method" not in message:
            answers.setdefault(message["id"], []).append(message)
    assert [m.get("result", {}).get("protocolVersion") for m in answers.pop("init")] == [
        "2025-11-25"
    ]
    for request_id, kind in model.kinds.items():
        got = answers.pop(request_id, [])
        if request_id in model.may_be_silent:
            assert len(got) <= 1, (request_id, got)  # an answer, or silence once cancelled
        else:
            assert len(got) == 1, (request_id, kind, got)
        for answer in got:
            check_answer(request_id, kind, answer)
    assert not answers, f"answers to requests never sent: {answers}"
    for message in peer.received:
        assert "Traceback" not in json.dumps(message)


def check_answer(request_id: int, kind: str, answer: dict[str, Any]) -> None:
    if kind == "mcp_error_child":
        assert answer["error"] == {"code": CHILD_CODE, "message": f"child {request_id} refused"}
        return
    if "error" in answer:
        # the only other error a request may meet: a busy server's bound
        assert kind == "detach", answer
        assert answer["error"]["code"] == -32000
        return
    result = answer["result"]
    text = result["content"][0]["text"]
    if kind == "tool_error_child":
        assert result["isError"] is True
        assert text == f"child {request_id} says no"
    else:
        assert text == f"{kind} {request_id}", answer


@SETTINGS
@given(scenarios)
def test_a_raw_peer_cannot_break_the_sessions_invariants(
    scenario: tuple[list[str], list[Step]],
) -> None:
    head, body = scenario
    trio.run(run_scenario, head, body, clock=trio.testing.MockClock())


# ---------------------------------------------------------------- a re-entrant client

client_steps = st.one_of(
    st.tuples(st.just("call"), st.sampled_from(("quick", "park", "progress", "log", "churn"))),
    st.tuples(st.just("release"), st.integers(0, 30)),
    st.tuples(st.just("cancel"), st.integers(0, 30)),
    st.tuples(st.just("race"), st.integers(0, 30)),  # release, then cancel the caller
    st.tuples(st.just("advance"), st.sampled_from([0.5, 3.0])),
)


@dataclass
class Call:
    kind: str
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    outcomes: list[str] = field(default_factory=list)
    progress: list[float] = field(default_factory=list)


async def run_client_scenario(body: list[Step]) -> None:
    world = World()
    server = make_server(world)
    calls: list[Call] = []
    callbacks: list[str] = []
    clients: list[trimcp.Client] = []

    async def on_tools_changed() -> None:
        tools = await clients[0].list_all_tools()  # calls back into its own client
        callbacks.append(f"listed {len(tools)}")

    async def on_log(params: Any) -> None:
        await clients[0].ping()
        callbacks.append(f"log {params.data}")

    async def run_call(number: int, item: Call) -> None:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            await clients[0].ping()
            item.progress.append(done)

        with item.scope:
            try:
                result = await clients[0].call_tool(
                    item.kind, {"n": number}, on_progress=on_progress
                )
                item.outcomes.append("result:" + result.content[0].text)  # type: ignore[union-attr]
            except trimcp.McpError as exc:
                item.outcomes.append(f"error:{exc.code}")
            except trio.Cancelled:
                item.outcomes.append("cancelled")
                raise

    baseline = len(live_tasks())
    async with trimcp.open_client(
        server.in_memory(),
        era="handshake",
        on_tools_list_changed=on_tools_changed,
        on_log=on_log,
        limits=LIMITS,
    ) as client:
        clients.append(client)
        session = client.session
        async with trio.open_nursery() as nursery:
            for step in body:
                client_step(step, calls, world, nursery, run_call)
                await trio.testing.wait_all_tasks_blocked()
                assert session.pending <= len(calls) + 2
                assert session.queued_notifications <= LIMITS.max_queued_notifications
            world.all_released = True
            for gate in list(world.gates.values()):
                gate.set()
            await trio.testing.wait_all_tasks_blocked()
        await trio.testing.wait_all_tasks_blocked()
        assert session.pending == 0
    for number, item in enumerate(calls, start=1):
        assert len(item.outcomes) == 1, (number, item)
        (outcome,) = item.outcomes
        if outcome == "cancelled":
            continue
        if item.kind == "progress" and outcome.startswith("result"):
            assert item.progress == [1, 2, 3]  # every one, in order, before the result
        assert outcome == f"result:{item.kind} {number}", (number, item)
    await trio.testing.wait_all_tasks_blocked()
    assert len(live_tasks()) == baseline, "a task outlived the client"


def client_step(
    step: Step,
    calls: list[Call],
    world: World,
    nursery: trio.Nursery,
    run_call: Callable[[int, Call], Awaitable[None]],
) -> None:
    action = step[0]
    if action == "call":
        item = Call(step[1])
        calls.append(item)
        nursery.start_soon(run_call, len(calls), item)
    elif action in ("release", "cancel", "race") and calls:
        if action in ("release", "race"):
            for gate in list(world.gates.values()):
                gate.set()  # parked calls answer, and the next step may race them
        if action in ("cancel", "race"):
            calls[step[1] % len(calls)].scope.cancel()
    elif action == "advance":
        clock = trio.lowlevel.current_clock()
        assert isinstance(clock, trio.testing.MockClock)
        clock.jump(step[1])


@SETTINGS
@given(st.lists(client_steps, max_size=14))
def test_callbacks_that_re_enter_the_client_keep_every_call_answered(body: list[Step]) -> None:
    trio.run(run_client_scenario, body, clock=trio.testing.MockClock())

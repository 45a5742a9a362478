"""The stateful conformance machine: Hypothesis drives sessions against a live server.

:func:`machine_for` builds a :class:`hypothesis.stateful.RuleBasedStateMachine` bound to
one target. Each example opens a session (a revision and client capabilities drawn by
Hypothesis), then each rule performs one action (see :mod:`._actions`): schema-generated
requests and notifications, near-miss frames, tool calls with schema-generated
arguments, calls cancelled after some progress, listings page by page, bogus cursors,
disconnects and reconnects. Every action ends with a barrier, so every property is
checked after every step; a failure is shrunk by Hypothesis to the shortest sequence of
actions that still breaks the same property, and the :class:`Recorder` keeps it.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import trio
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from ._actions import perform
from ._compile import for_tool_schema
from ._frames import Frame, dumps, expect_for
from ._inbox import Target
from ._invalid import invalid_frames
from ._loop import LoopThread
from ._messages import client_notifications, client_requests
from ._schemas import HANDSHAKE_REVISIONS
from ._session import LIST_CAPABILITY, Options, Session
from ._violations import Violation

__all__ = ["Failure", "OutOfTime", "Recorder", "machine_for"]


@attrs.define
class Failure:
    """A broken property, its message, and the actions that reproduce it."""

    property: str
    detail: str
    steps: list[dict[str, Any]]


class OutOfTime(KeyboardInterrupt):
    """The time budget is spent: stops Hypothesis at once (it never shrinks past this)."""


#: The one step done even once time is up: closing the example's session.
_ALWAYS = frozenset({"close"})


def _size(steps: list[dict[str, Any]]) -> tuple[int, int]:
    return len(steps), len(json.dumps(steps))


@attrs.define
class Recorder:
    """Counts examples and keeps the smallest failing steps seen for each property.

    ``deadline`` (monotonic seconds) ends the run when reached; ``shrink_seconds`` bounds
    the time spent shrinking after the first failure (each example may start a process).
    """

    on_example: Callable[[int], None] | None = None
    deadline: float | None = None
    shrink_seconds: float = 120.0
    examples: int = 0
    failures: dict[str, Failure] = attrs.Factory(dict)
    first_failure: float | None = None

    def out_of_time(self) -> bool:
        """Whether the run's deadline has passed."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def started(self) -> None:
        if self.out_of_time():
            raise OutOfTime
        now = time.monotonic()
        if self.first_failure is not None and now - self.first_failure >= self.shrink_seconds:
            raise OutOfTime
        self.examples += 1
        if self.on_example is not None:
            self.on_example(self.examples)

    def finished(self, steps: list[dict[str, Any]], error: BaseException | None) -> None:
        if error is None or isinstance(error, OutOfTime):
            return
        name = error.property if isinstance(error, Violation) else "harness"
        detail = (
            error.detail if isinstance(error, Violation) else f"{type(error).__name__}: {error}"
        )
        if self.first_failure is None:
            self.first_failure = time.monotonic()
        best = self.failures.get(name)
        if best is None or _size(steps) <= _size(best.steps):
            self.failures[name] = Failure(name, detail, copy.deepcopy(steps))


def _capabilities(version: str) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, st.SearchStrategy[Any]] = {
        "sampling": st.just({}),
        "roots": st.fixed_dictionaries({"listChanged": st.booleans()}),
    }
    if version >= "2025-06-18":
        optional["elicitation"] = st.just({})
    return st.fixed_dictionaries({}, optional=optional)


def _sanitise(message: dict[str, Any], session: Session) -> str | None:
    """Give a generated request a fresh progress token, and no task augmentation."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    params.pop("task", None)
    meta = params.get("_meta")
    if isinstance(meta, dict) and "progressToken" in meta:
        meta["progressToken"] = session.fresh_token()
        token: str = meta["progressToken"]
        return token
    if message.get("method") == "notifications/cancelled":
        params["requestId"] = f"never-sent-{session.fresh_id()}"
    return None


def machine_for(  # noqa: C901 - the rules are methods of one class defined here
    target: Target,
    options: Options,
    recorder: Recorder,
    versions: tuple[str, ...] = HANDSHAKE_REVISIONS,
) -> type[RuleBasedStateMachine]:
    """A state machine class bound to ``target`` (run it with Hypothesis)."""

    class ConformanceMachine(RuleBasedStateMachine):
        bound: ClassVar[tuple[Target, Options, Recorder]] = (target, options, recorder)

        def __init__(self) -> None:
            super().__init__()
            # First: once time is up, no example starts a thread it would never stop
            # (Hypothesis tears down only a machine that was made).
            recorder.started()
            self.loop = LoopThread(target.clock)
            self.session = Session(target, self.loop.nursery, options)
            self.failed: BaseException | None = None
            self.opened: dict[str, Any] = {}

        def do(self, action: dict[str, Any]) -> None:
            if action["op"] not in _ALWAYS and recorder.out_of_time():
                # Time is up: the rest of this example is skipped (each step may wait
                # for its response timeout; an open may start a process), and teardown
                # still closes the session. Without one, no rule can run: Hypothesis
                # drops the example.
                return
            limit = options.step_limit
            try:
                self.loop.call(perform, self.session, action, limit=limit)
            except BaseException as exc:
                self.failed = exc
                raise

        def live(self) -> bool:
            return self.session.connection is not None and self.session.checker.initialized

        @property
        def version(self) -> str:
            return self.session.checker.version

        def fresh(self, data: st.DataObject) -> str | int:
            return self.session.fresh_id(text=data.draw(st.booleans(), label="text id"))

        @initialize(
            data=st.data(),
            version=st.sampled_from(versions),
            answers=st.sampled_from(["result", "error"]),
        )
        def open(self, data: st.DataObject, version: str, answers: str) -> None:
            caps = data.draw(_capabilities(version), label="client capabilities")
            self.opened = {
                "op": "open",
                "version": version,
                "capabilities": caps,
                "answers": answers,
            }
            self.do(dict(self.opened))

        @precondition(live)
        @rule(data=st.data())
        def request(self, data: st.DataObject) -> None:
            strategy = client_requests(
                self.version, request_id=self.fresh(data), exclude=("initialize",)
            )
            message = data.draw(strategy, label="request")
            token = _sanitise(message, self.session)
            frame = Frame(dumps(message), "valid", expect_for(self.version, message))
            self.do({"op": "send", "frame": frame.to_json(), "token": token})

        @precondition(live)
        @rule(data=st.data())
        def notification(self, data: st.DataObject) -> None:
            message = data.draw(client_notifications(self.version), label="notification")
            _sanitise(message, self.session)
            frame = Frame(dumps(message), "valid", expect_for(self.version, message))
            self.do({"op": "send", "frame": frame.to_json(), "token": None})

        @precondition(live)
        @rule(data=st.data())
        def near_miss(self, data: st.DataObject) -> None:
            ids = [self.fresh(data), self.fresh(data)]
            token = self.session.fresh_token()
            strategy = invalid_frames(self.version, ids, max_size=options.max_frame, token=token)
            frame = data.draw(strategy, label="near miss")
            self.do({"op": "send", "frame": frame.to_json(), "token": token})

        def _tool_call(self, data: st.DataObject) -> tuple[dict[str, Any], str] | None:
            tools = [
                t
                for t in self.session.tools
                if options.call_tools and t.get("name") not in options.skip_tools
            ]
            if not tools:
                return None
            tool = data.draw(st.sampled_from(tools), label="tool")
            schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
            arguments = data.draw(for_tool_schema(schema), label="arguments")
            token = self.session.fresh_token()
            params = {
                "name": tool["name"],
                "arguments": arguments,
                "_meta": {"progressToken": token},
            }
            message = {
                "jsonrpc": "2.0",
                "id": self.fresh(data),
                "method": "tools/call",
                "params": params,
            }
            return message, token

        @precondition(live)
        @rule(data=st.data())
        def call_tool(self, data: st.DataObject) -> None:
            call = self._tool_call(data)
            if call is not None:
                frame = Frame(dumps(call[0]), "valid", expect_for(self.version, call[0]))
                self.do({"op": "send", "frame": frame.to_json(), "token": call[1]})

        @precondition(live)
        @rule(data=st.data(), after=st.integers(0, 2))
        def call_and_cancel(self, data: st.DataObject, after: int) -> None:
            call = self._tool_call(data)
            if call is not None:
                expect = attrs.evolve(expect_for(self.version, call[0]), count="at-most-one")
                frame = Frame(dumps(call[0]), "valid", expect)
                action = {"op": "call_cancel", "frame": frame.to_json(), "token": call[1]}
                self.do({**action, "id": call[0]["id"], "after": after})

        @precondition(live)
        @rule(data=st.data(), bogus=st.sampled_from([None, "bogus-cursor", "", "eyJ9"]))
        def paginate(self, data: st.DataObject, bogus: str | None) -> None:
            caps = self.session.checker.server_capabilities
            methods = [m for m, cap in LIST_CAPABILITY.items() if cap in caps]
            if methods:
                method = data.draw(st.sampled_from(methods), label="list")
                self.do({"op": "paginate", "method": method, "bogus": bogus})

        @precondition(live)
        @rule(data=st.data(), in_flight=st.booleans())
        def reconnect(self, data: st.DataObject, in_flight: bool) -> None:
            call = self._tool_call(data) if in_flight else None
            if call is not None:  # left running: the disconnect must end it
                expect = attrs.evolve(expect_for(self.version, call[0]), count="at-most-one")
                frame = Frame(dumps(call[0]), "valid", expect)
                self.do({"op": "send", "frame": frame.to_json(), "token": call[1]})
            self.do({"op": "close"})
            self.do(dict(self.opened))

        def teardown(self) -> None:
            try:
                if self.failed is None and self.session.connection is not None:
                    self.do({"op": "close"})
            finally:
                with contextlib.suppress(Exception, trio.Cancelled):  # a crashed run
                    self.loop.call(self.session.abort, limit=30)
                self.loop.stop()
                self.session.kill_children()
                recorder.finished(self.session.trace, self.failed)

    return ConformanceMachine

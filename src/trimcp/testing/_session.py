"""Run one session's actions against a target, feeding everything through the Checker.

An action is a small JSON object (``{"op": "send", "frame": {...}}``), so the list of
actions a run performed *is* its replay file. After every action :meth:`Session.step`
holds a barrier: a fresh ``ping`` is sent and the step waits until every request owed an
answer has one (or its deadline passes), which also checks that the session survived.
A background task drains the connection as messages arrive, answers the server's
reverse requests, and keeps the first violation for the step to raise.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import trio

from ._checker import DEFAULT_TIMEOUT, Checker
from ._frames import Expect, Frame, dumps, expect_for
from ._inbox import Connection, Target
from ._schemas import HANDSHAKE_REVISIONS
from ._violations import Violation, violation

__all__ = ["Options", "Session", "reverse_answer"]

Id = str | int
LIST_KEYS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
#: The server capability each list method belongs to.
LIST_CAPABILITY = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "prompts/list": "prompts",
}


@attrs.frozen
class Options:
    """Budgets and switches of a conformance run.

    ``response_timeout``: seconds a request may go unanswered; a progress notification
    for it starts that wait again (progress is a sign of life, and the spec lets it
    reset a timeout), up to ``progress_limit`` seconds in all. ``tool_timeouts``: the
    same wait, per tool name, for ``tools/call`` (a tool known to be slow).
    ``max_pages``: pages one listing may take before it counts as endless.
    ``max_frame``: the largest frame sent (the oversized frames stay under it).
    ``startup_timeout``: seconds ``initialize`` may take (a server process may be slow
    to start). ``skip_tools``: tools never called. ``call_tools``: call the server's
    tools at all. ``ignore``: properties not to report (to look past a known failure;
    the message that broke one is then only partly checked).
    """

    response_timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = 30.0
    max_pages: int = 50
    max_frame: int = 1 << 20
    skip_tools: tuple[str, ...] = ()
    call_tools: bool = True
    ignore: tuple[str, ...] = ()
    tool_timeouts: Mapping[str, float] = attrs.field(factory=dict, hash=False)
    progress_limit: float = 120.0

    def timeout_for(self, frame: Frame) -> float:
        """The silence allowed before ``frame``'s answer is overdue."""
        if self.tool_timeouts and frame.expect.method == "tools/call":
            tool = _tool_name(frame.data)
            if tool is not None and tool in self.tool_timeouts:
                return self.tool_timeouts[tool]
        return self.response_timeout

    @property
    def step_limit(self) -> float:
        """Seconds one step (an action and its barrier) may take before the run is
        declared hung: every wait it makes is bounded by these budgets."""
        longest = max([self.response_timeout, *self.tool_timeouts.values()])
        return 10 * longest + max(longest, self.progress_limit) + 30


def _tool_name(data: bytes) -> str | None:
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    params = value.get("params") if isinstance(value, dict) else None
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


def reverse_answer(method: str, request_id: Id, policy: str) -> dict[str, Any]:
    """The peer's answer to a reverse request: a minimal valid result, or an error."""
    results: dict[str, Any] = {
        "ping": {},
        "roots/list": {"roots": []},
        "sampling/createMessage": {
            "role": "assistant",
            "content": {"type": "text", "text": "ok"},
            "model": "conform",
        },
        "elicitation/create": {"action": "decline"},
    }
    if policy == "result" and method in results:
        return {"jsonrpc": "2.0", "id": request_id, "result": results[method]}
    error = {"code": -32603 if method in results else -32601, "message": "declined by the peer"}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _request_in(raw: bytes) -> tuple[Id, str] | None:
    """``(id, method)`` when ``raw`` is a request that can be answered at all."""
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("method"), str):
        return None
    request_id = value.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id, value["method"]


class Session:
    """One connection and its checker; every action goes through :meth:`run`."""

    def __init__(self, target: Target, nursery: trio.Nursery, options: Options) -> None:
        self.target = target
        self.nursery = nursery
        self.options = options
        self.connection: Connection | None = None
        self.checker = Checker(HANDSHAKE_REVISIONS[-1], {})
        self.trace: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.failure: Violation | None = None
        self.answers = "result"
        self._index = 0
        self._ids = 0
        self._changed = trio.Event()
        self.opened: list[Connection] = []

    # -- ids --------------------------------------------------------------------------
    def fresh_id(self, text: bool = False) -> Id:
        self._ids += 1
        return f"c-{self._ids}" if text else self._ids

    def fresh_token(self) -> str:
        self._ids += 1
        return f"progress-{self._ids}"

    # -- plumbing ---------------------------------------------------------------------
    def _raise(self) -> None:
        if self.failure is not None:
            raise self.failure

    async def abort(self) -> None:
        """End every connection at once (after a failure): kill children, close pipes."""
        for connection in self.opened:
            abort = getattr(connection, "abort", None)
            if abort is not None:
                await abort()

    def kill_children(self) -> None:
        """Kill any child process still running (last resort, after the loop stopped)."""
        for connection in self.opened:
            process = getattr(connection, "process", None)
            if process is None:
                continue
            if process.returncode is None:
                process.kill()
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(process.pid, 0)
            for pipe in (process.stdin, process.stdout, process.stderr):
                with contextlib.suppress(Exception):
                    pipe.close()

    def _changed_now(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def drain(self, connection: Connection, checker: Checker) -> None:
        """Check everything as it arrives; answer reverse requests; keep the first failure."""
        while True:
            items = connection.inbox.take()
            for item in items:
                try:
                    reverse = checker.receive(item, trio.current_time())
                except Violation as exc:
                    if exc.property not in self.options.ignore:
                        self.failure = self.failure or exc
                    # A request that broke a rule is still answered, so the server is
                    # never left waiting because of the peer (what follows stays honest).
                    reverse = _request_in(item.raw)
                if reverse is not None:
                    answer = reverse_answer(reverse[1], reverse[0], self.answers)
                    checker.answered(reverse[0])
                    await connection.send(dumps(answer), -1)
            if connection.inbox.overflowed and self.failure is None:
                self.failure = violation("one-response", "the server flooded the peer")
            self._changed_now()
            await connection.inbox.wait_until(connection.inbox.has_items, math.inf)

    async def wait(self, ready: Callable[[], bool], deadline: float) -> None:
        """Wait until ``ready()``, a failure, a dead connection or the deadline."""
        connection = self.connection
        assert connection is not None
        while not (ready() or self.failure is not None or connection.dead() is not None):
            now = trio.current_time()
            if now >= deadline:
                break
            # Re-check at least every 50 ms: a dead process shows no inbox event.
            with trio.move_on_at(min(deadline, now + 0.05)):
                await self._changed.wait()
        self._raise()

    async def send(
        self, frame: Frame, token: Id | None = None, timeout: float | None = None
    ) -> int:
        """Send ``frame``; its answer may take ``timeout`` seconds (default: the options')."""
        assert self.connection is not None
        self._index += 1
        wait = self.options.timeout_for(frame) if timeout is None else timeout
        self.checker.sent(self._index, frame, trio.current_time(), token, wait)
        await self.connection.send(frame.data, self._index)
        return self._index

    async def answer_of(self, index: int) -> Any:
        """Wait for the answer to frame ``index``; the response (``None`` if none came)."""
        connection = self.connection
        assert connection is not None
        pending = self.checker.pending[index]
        cap = self.options.progress_limit
        # Progress may move the deadline on while waiting: wait again until it holds.
        while pending.answers == 0 and trio.current_time() < pending.deadline(cap):
            await self.wait(lambda: pending.answers > 0, pending.deadline(cap))
            if connection.dead() is not None:
                break
        return pending.value

    async def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None
    ) -> tuple[int, Any]:
        """Send a well-formed request; return its index and response (``None`` if none)."""
        request_id = self.fresh_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        frame = Frame(dumps(message), "valid", expect_for(self.checker.version, message))
        index = await self.send(frame, timeout=timeout)
        return index, await self.answer_of(index)

    async def barrier(self) -> None:
        """Ping, then wait until everything owed is answered; check the session lives."""
        connection = self.connection
        assert connection is not None
        request_id = self.fresh_id(text=True)
        message = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
        ping = Frame(dumps(message), "barrier", Expect("one", (request_id,), method="ping"))
        answered = self.checker.pending[await self.send(ping)]
        cap = self.options.progress_limit
        while True:
            await self.wait(self.checker.settled, self.checker.next_deadline(cap))
            now = trio.current_time()
            over = self.checker.settled() or connection.dead() is not None
            if answered.answers == 0 and (over or now >= answered.deadline(cap)):
                dead = connection.dead()
                reason = f" ({dead})" if dead else ""
                raise violation(
                    "session-survives", f"the ping after the last step was not answered{reason}"
                )
            self.checker.overdue(now, cap)
            if over:
                break
        self.checker.barrier()
        self._raise()

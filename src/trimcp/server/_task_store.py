"""The server's task table: records of both kinds of tasks, and their lives.

One table holds the tasks of the stateless-era extension (``kind="extension"``,
SEP-2663) and the 2025-11-25 core tasks (``kind="core"``); a request sees only tasks
of its own era's kind.

A task outlives the request that created it, so it runs in the task nursery of the
serving that carried its request (a :class:`~._task_host.TaskHost`; see that module),
never in a session's or a request's. Each task is one Trio task there, in two cancel
scopes: the outer one's deadline is the task's TTL (counted from creation), the inner
one is the work's, which ``tasks/cancel`` cancels. When the work ends the record keeps
its outcome until the TTL has passed, then it is removed; ``tasks/get`` then answers
``-32602``. Work still running at its TTL is cancelled and the task removed. A core
task may ask for a TTL of its own (``params.task.ttl``); it gets at most ``ttl``.

Bounds: at most ``max_tasks`` records (running or keeping a result) at once
(:data:`DEFAULT_MAX_TASKS`); creating one more is refused with ``-32600`` naming the
bound, because dropping a finished task before its TTL would break the promise that
``tasks/get`` resolves for its TTL. Each task has at most :data:`MAX_PENDING_INPUTS`
outstanding input requests.

Who sees a task is decided in one place, :meth:`TaskStore.visible`, which
:meth:`TaskStore.find` (every lookup by id) and :meth:`TaskStore.listed` go through.
Task ids are 192 random bits from :mod:`secrets`: they are the capability to read a
result, so they must not be guessable. Where an authorization context exists,
``owner`` maps a request to its principal; a task is then visible only to requests of
the principal that created it (others get the same ``-32602`` as for an unknown id).
Without one, a core task is visible only to the session that created it (``tasks/list``
must not hand one client another's ids), and is cancelled and removed when that
session ends, since nobody could reach it any more.

With a shared store (:mod:`._shared_tasks`), every record is mirrored there as it
changes (:attr:`TaskStore.mirror`), so that another process finds it
(:meth:`TaskStore.lookup`, :meth:`TaskStore.listed_everywhere`) through the same
:meth:`TaskStore.visible`, and relays what it is asked to do with it (cancel, answer)
to the process running its work.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Hashable
from datetime import UTC, datetime
from typing import Any, Final, final

import trio

from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext, Session
from trimcp.protocol import TERMINAL_STATUSES
from trimcp.wire import INVALID_PARAMS, INVALID_REQUEST, NO_DATA

from ._mrtr import INPUT_METHODS, check_response
from ._task_host import TaskHost, not_served
from ._task_view import TaskKind, TaskMirror, TaskView, same_owner, session_id_of

__all__ = [
    "DEFAULT_MAX_TASKS",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_TASK_TTL",
    "MAX_PENDING_INPUTS",
    "OwnerOf",
    "TaskKind",
    "TaskMirror",
    "TaskRecord",
    "TaskStore",
    "TaskView",
    "session_id_of",
]

logger = logging.getLogger("trimcp.server.tasks")

DEFAULT_MAX_TASKS: Final = 1024
"""Tasks (running or holding a result) one server keeps at once."""
DEFAULT_TASK_TTL: Final = 3600.0
"""Seconds a task lives from creation, result retention included."""
DEFAULT_POLL_INTERVAL: Final = 0.5
"""Seconds between polls the server asks clients for (``pollIntervalMs``)."""
MAX_PENDING_INPUTS: Final = 32
"""Outstanding input requests one task may have at once (more is a handler bug)."""

OwnerOf = Callable[[HandlerContext], Hashable | None]
"""Maps a request to the principal it acts for (``None``: no authorization context)."""

#: What an input request of a task is answered with: the client's result, or its error.
Answer = dict[str, Any] | McpError

_PREFIX: Final = {
    "sampling/createMessage": "sample",
    "elicitation/create": "elicit",
    "roots/list": "roots",
}


def _iso(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@final
class TaskRecord:
    """One task: its status, its outcome, and its outstanding input requests."""

    def __init__(
        self,
        store: TaskStore,
        owner: Hashable | None,
        ttl: float | None,
        poll: float,
        *,
        kind: TaskKind = "extension",
        session: Session | None = None,
        session_id: str | None = None,
    ) -> None:
        self.store = store
        self.task_id = secrets.token_urlsafe(24)
        self.owner = owner
        self.kind = kind
        #: The session that created a core task: its status notices go there.
        self.session = session
        #: That session's id, where it has one (the same on every process).
        self.session_id = session_id
        self.status = "working"
        self.status_message: str | None = None
        now = store.wallclock()
        self.created_at = _iso(now)
        self.last_updated_at = self.created_at
        self.ttl_ms = None if ttl is None else max(1, round(ttl * 1000))
        self.poll_interval_ms = max(1, round(poll * 1000))
        self.deadline = math.inf if ttl is None else trio.current_time() + ttl
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        #: Outstanding input requests by key, and where each one's answer goes.
        self.pending: dict[str, dict[str, Any]] = {}
        self._answers: dict[str, trio.MemorySendChannel[Answer]] = {}
        self._keys = 0
        #: Every input key this task issued (a key names one input request, once).
        self._used: set[str] = set()
        #: Input requests being carried to the client now (core tasks: by a
        #: ``tasks/result``), so that a second ``tasks/result`` does not send them twice.
        self.claimed: set[str] = set()
        #: The work's cancel scope (``tasks/cancel`` cancels it).
        self.scope = trio.CancelScope()
        #: The task's whole life (its deadline is the TTL); set by the job running it.
        self.life: trio.CancelScope | None = None
        self._changed = trio.Event()

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    # -- the wire ---------------------------------------------------------------
    def task(self) -> dict[str, Any]:
        """The extension's ``Task`` (what ``CreateTaskResult`` carries besides
        ``resultType``)."""
        return self._members("ttlMs", "pollIntervalMs")

    def core_task(self) -> dict[str, Any]:
        """The 2025-11-25 ``Task`` (``CreateTaskResult.task``, ``tasks/get`` ...)."""
        return self._members("ttl", "pollInterval")

    def _members(self, ttl: str, poll: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            ttl: self.ttl_ms,
            poll: self.poll_interval_ms,
        }
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        return out

    def detailed(self) -> dict[str, Any]:
        """The ``DetailedTask`` of the current status (``tasks/get``, ``notifications/tasks``)."""
        out = self.task()
        if self.status == "input_required":
            out["inputRequests"] = dict(self.pending)
        elif self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        return out

    # -- transitions ---------------------------------------------------------------
    def _set(self, status: str, message: str | None = None) -> None:
        if self.terminal:
            return  # terminal states never change
        self.status = status
        if message is not None or status in TERMINAL_STATUSES:
            self.status_message = message
        self._touch()

    def _touch(self) -> None:
        self.last_updated_at = _iso(self.store.wallclock())
        self.store.changed(self)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        """Return at the next change of status, status message or input requests."""
        await self._changed.wait()

    def describe(self, message: str) -> None:
        """Set ``statusMessage`` of a running task (what it is doing now)."""
        if not self.terminal and message != self.status_message:
            self.status_message = message
            self._touch()

    def complete(self, result: dict[str, Any]) -> None:
        """The work returned ``result``. A core task whose tool result is an error is
        ``failed`` (as 2025-11-25 asks) and ``tasks/result`` still returns the result."""
        self.result = result
        if self.kind == "core" and result.get("isError") is True:
            self._set("failed", "The tool reported an error.")
        else:
            self._set("completed")

    def fail(self, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None and data is not NO_DATA:
            error["data"] = data
        self.error = error
        self._set("failed", message)

    def cancelled(self) -> None:
        self._set("cancelled", "The task was cancelled.")

    def discard(self) -> None:
        """End the task now: its work is cancelled and the record removed."""
        self.scope.cancel()
        if self.life is not None:
            self.life.cancel()
        self.store.forget(self)

    # -- input requests ------------------------------------------------------------
    async def ask(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """Ask the client for input while the task runs: the task is ``input_required``
        until every outstanding request is answered through ``tasks/update``. ``key``
        names the input request (a fresh one is made when absent or already used)."""
        if method not in INPUT_METHODS:
            raise McpError(
                INVALID_PARAMS, f"{method} cannot be asked of a client from inside a task"
            )
        if len(self.pending) >= MAX_PENDING_INPUTS:
            raise McpError(INVALID_PARAMS, "too many outstanding input requests in one task")
        self._keys += 1  # keys are never reused over the task's lifetime
        if key is None or key in self._used:
            key = f"{_PREFIX[method]}-{self._keys}"
        self._used.add(key)
        send, receive = trio.open_memory_channel[Answer](1)
        self.pending[key] = {"method": method, "params": params}
        self._answers[key] = send
        self._set("input_required")  # also when it already was: one request more
        try:
            answer = await receive.receive()
        finally:
            self.pending.pop(key, None)
            self._answers.pop(key, None)
            self.claimed.discard(key)
            if not self.pending and self.status == "input_required":
                self._set("working")
        if isinstance(answer, McpError):
            raise answer
        return answer

    def reply(self, key: str, answer: Answer) -> None:
        """Deliver the client's answer (or error) to input request ``key``, if outstanding."""
        channel = self._answers.pop(key, None)
        self.pending.pop(key, None)
        if channel is not None:
            channel.send_nowait(answer)

    def release(self, key: str) -> None:
        """Input request ``key`` was not carried to its end: offer it again."""
        if key in self.claimed:
            self.claimed.discard(key)
            self._wake()

    def answer(self, responses: dict[str, Any]) -> None:
        """Deliver ``tasks/update`` responses. Keys not outstanding are ignored (never
        issued, already answered); a malformed answer to an outstanding key is
        ``-32602`` and nothing of the update is applied."""
        accepted: list[tuple[str, dict[str, Any]]] = []
        for key, response in responses.items():
            request = self.pending.get(key)
            if request is not None:
                accepted.append((key, check_response(request["method"], response)))
        for key, response in accepted:
            self.reply(key, response)


@final
class TaskStore:
    """The task table of one server; see the module doc.

    Args:
      max_tasks: bound on tasks held at once (:data:`DEFAULT_MAX_TASKS`).
      ttl: seconds each task lives from creation (:data:`DEFAULT_TASK_TTL`), and the
        most a core task may ask for; ``None`` keeps tasks until their serving ends
        (not advised: the table fills).
      poll_interval: seconds between polls asked of clients (:data:`DEFAULT_POLL_INTERVAL`).
      owner: maps a request to its principal, binding each task to its creator.
      wallclock: Unix seconds for ``createdAt``/``lastUpdatedAt`` (tests pass a fake);
        TTLs run on Trio's clock.
    """

    def __init__(
        self,
        *,
        max_tasks: int = DEFAULT_MAX_TASKS,
        ttl: float | None = DEFAULT_TASK_TTL,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        owner: OwnerOf | None = None,
        wallclock: Callable[[], float] = time.time,
    ) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        if (ttl is not None and ttl <= 0) or poll_interval <= 0:
            raise ValueError("ttl and poll_interval must be positive")
        self.max_tasks = max_tasks
        self.ttl = ttl
        self.poll_interval = poll_interval
        self.owner = owner
        self.wallclock = wallclock
        #: Called with each record whose status changed (status notifications).
        self.on_change: Callable[[TaskRecord], None] | None = None
        #: Where records are mirrored for other processes (a shared store), or ``None``.
        self.mirror: TaskMirror | None = None
        self._records: dict[str, TaskRecord] = {}
        #: Hosts of the servings running now, and the hosts of :meth:`run`.
        self._hosts: list[TaskHost] = []
        self._defaults: list[TaskHost] = []

    def __len__(self) -> int:
        return len(self._records)

    # -- where tasks run ------------------------------------------------------------
    def host(self) -> TaskHost:
        """A new task host for one serving (``serve_*`` functions make one each)."""
        return TaskHost(self._hosts)

    @property
    def running(self) -> bool:
        """Whether some serving (or :meth:`run`) is serving tasks now."""
        return bool(self._hosts or self._defaults)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the tasks of sessions bound to no host, until cancelled; the tasks
        started here end with it. For code that serves channels by other means than
        the ``serve_*`` functions. Several may run at once: new tasks go to the newest.
        """
        await TaskHost(self._defaults).run(task_status=task_status)

    def default_host(self) -> TaskHost | None:
        """Where tasks of sessions bound to no host go: the newest :meth:`run`."""
        return self._defaults[-1] if self._defaults else None

    def spawn(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Start ``fn`` in the newest :meth:`run` (``-32603`` if none runs)."""
        host = self.default_host()
        if host is None:
            raise not_served()
        host.spawn(fn)

    def changed(self, record: TaskRecord) -> None:
        if self._records.get(record.task_id) is not record:
            return
        if self.on_change is not None:
            self.on_change(record)
        if self.mirror is not None:
            self.mirror.changed(record)

    async def published(self, record: TaskRecord) -> None:
        """``record`` was created: with a shared store, on record there before its id
        is answered, so that a ``tasks/get`` anywhere finds it."""
        if self.mirror is not None:
            await self.mirror.publish(record)
        else:
            await trio.lowlevel.checkpoint()

    # -- the table --------------------------------------------------------------------
    def create(
        self, ctx: HandlerContext, *, kind: TaskKind = "extension", ttl_ms: int | None = None
    ) -> TaskRecord:
        """A new record for a task created by ``ctx``'s request, in the table at once
        (so a ``tasks/get`` resolves as soon as the client learns the id). ``ttl_ms``
        is the TTL the client asked for (core tasks), capped at ``ttl``."""
        if len(self._records) >= self.max_tasks:
            raise McpError(
                INVALID_REQUEST,
                f"Invalid Request: at most {self.max_tasks} tasks at once; try again later",
            )
        owner = self.owner(ctx) if self.owner is not None else None
        ttl = self.ttl
        if ttl_ms is not None:
            ttl = max(ttl_ms, 1) / 1000 if ttl is None else min(ttl, max(ttl_ms, 1) / 1000)
        session = ctx.session_object if kind == "core" else None
        session_id = session_id_of(ctx) if kind == "core" else None
        record = TaskRecord(
            self, owner, ttl, self.poll_interval, kind=kind, session=session, session_id=session_id
        )
        self._records[record.task_id] = record
        return record

    def visible(self, ctx: HandlerContext, record: TaskView) -> bool:
        """Whether ``ctx``'s request may see ``record``: the one check every lookup and
        listing goes through (module doc)."""
        if (record.kind == "core") == ctx.session.stateless:
            return False  # each era sees the tasks of its own kind only
        if self.owner is not None:
            return same_owner(record.owner, self.owner(ctx))
        if record.kind != "core" or record.session is ctx.session_object:
            return True
        return record.session_id is not None and record.session_id == session_id_of(ctx)

    def local(self, task_id: str) -> TaskRecord | None:
        """The record of ``task_id`` if its work runs here (no visibility check)."""
        return self._records.get(task_id)

    def find(self, ctx: HandlerContext, task_id: object) -> TaskRecord:
        """The record ``ctx``'s request may see under ``task_id``; ``-32602`` otherwise."""
        if not isinstance(task_id, str):
            raise McpError(INVALID_PARAMS, "Invalid params: taskId must be a string")
        record = self._records.get(task_id)
        if record is None or not self.visible(ctx, record):
            # another principal's task is reported exactly like an unknown one
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return record

    def listed(self, ctx: HandlerContext) -> list[TaskRecord]:
        """The records ``ctx``'s request may see, oldest first (``tasks/list``)."""
        return [record for record in self._records.values() if self.visible(ctx, record)]

    async def lookup(self, ctx: HandlerContext, task_id: object) -> TaskView:
        """:meth:`find`, also among the tasks of the other processes of a shared store."""
        try:
            found = self.find(ctx, task_id)
        except McpError:
            if self.mirror is None or not isinstance(task_id, str):
                await trio.lowlevel.checkpoint()
                raise
        else:
            await trio.lowlevel.checkpoint()
            return found
        remote = await self.mirror.load(task_id)
        if remote is None or not self.visible(ctx, remote):
            raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return remote

    async def listed_everywhere(self, ctx: HandlerContext) -> list[TaskView]:
        """:meth:`listed`, with the core tasks of every process of a shared store."""
        local: list[TaskView] = list(self.listed(ctx))
        if self.mirror is None:
            await trio.lowlevel.checkpoint()
            return local
        scope = self.scope_of(ctx)
        seen = {record.task_id for record in local}
        remote = [t for t in await self.mirror.listed(scope) if t.task_id not in seen]
        return local + [t for t in remote if self.visible(ctx, t)]

    def scope_of(self, ctx: HandlerContext) -> str:
        """The index a request's core tasks are listed under in a shared store: its
        principal's, else its session's."""
        owner = self.owner(ctx) if self.owner is not None else None
        return f"o:{owner}" if owner is not None else f"s:{session_id_of(ctx)}"

    def session_ended(self, session: Session) -> None:
        """``session`` ended: its core tasks are unreachable unless an owner binds them
        to a principal, so they end now."""
        if self.owner is not None:
            return
        for record in list(self._records.values()):
            if record.session is session:
                record.discard()

    def forget(self, record: TaskRecord) -> None:
        if self._records.get(record.task_id) is record:
            del self._records[record.task_id]

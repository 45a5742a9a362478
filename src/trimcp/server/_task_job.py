"""One run of a tool as a task: the job in its serving's task nursery, and its context.

The tool body always runs in the task nursery of the serving that carried its request
(:mod:`._task_host`; never in the request's task), so it never has to move: the request
that called the tool waits for the job's *decision* and answers with it:

* the job **hands off** (a task is created): the request answers ``CreateTaskResult``
  and the body goes on as the task. A tool registered with ``task_handoff="start"``
  hands off before its body runs; one with ``task_handoff="explicit"`` runs as part of
  its request until it calls ``await ctx.begin_task()``, so whatever it asks before
  (``ctx.elicit`` ...) is an MRTR round of the request, answered synchronously, as the
  spec advises, and only then does the task begin;
* the body **ends before handing off**: its result or error (an MRTR
  ``InputRequired`` included) is the request's.

If the request goes away before a hand-off, the body is cancelled with it, as any
request's work would be. After the hand-off, :class:`TaskToolContext` turns reverse
calls into the task's input requests (``input_required`` until ``tasks/update``
answers them), a progress ``message`` into the task's ``statusMessage``, and drops
progress and log notifications, which the extension does not carry for tasks.

A 2025-11-25 core task (``kind="core"``) always hands off at once (the client asked for
a task; ``begin_task`` then just returns ``True``). Its reverse calls become input
requests too, carried to the client by ``tasks/result`` (:mod:`._core_tasks`); its
progress (to the original ``progressToken``, which stays valid for the task's life),
log messages and other notifications go to the session that created it, tagged with
the task's ``io.modelcontextprotocol/related-task``; a send to a session that has gone
away is dropped.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVarTuple, final

import trio

from trimcp.dispatch import ConnectionClosedError, McpError
from trimcp.nursery import BackgroundContext, HandlerContext
from trimcp.protocol import LoggingLevel, related_task_meta
from trimcp.wire import INTERNAL_ERROR

from ._context import ToolContext, log_level_allows
from ._task_store import TaskKind, TaskRecord, TaskStore

__all__ = ["TaskJob", "TaskToolContext"]

logger = logging.getLogger("trimcp.server.tasks")

Ts = TypeVarTuple("Ts")


@final
class TaskJob:
    """A tool body running in the task nursery, before and after its hand-off."""

    def __init__(
        self,
        store: TaskStore,
        ctx: HandlerContext,
        *,
        kind: TaskKind = "extension",
        ttl_ms: int | None = None,
    ) -> None:
        self.store = store
        self.ctx = ctx
        self.kind = kind
        self.ttl_ms = ttl_ms
        self.record: TaskRecord | None = None
        #: The work's cancel scope: the request's before the hand-off, the task's after.
        self.scope = trio.CancelScope()
        self.decided = trio.Event()
        self.outcome: tuple[str, Any] = ("error", None)
        #: The job's whole life; from the hand-off on, its deadline is the task's TTL.
        self.life = trio.CancelScope()
        self.last_progress: float | None = None

    def _decide(self, kind: str, value: Any) -> None:
        if not self.decided.is_set():
            self.outcome = (kind, value)
            self.decided.set()

    def hand_off(self, message: str | None = None) -> TaskRecord:
        """Create the task now (idempotent); its request answers ``CreateTaskResult``."""
        if self.record is None:
            record = self.store.create(self.ctx, kind=self.kind, ttl_ms=self.ttl_ms)
            record.scope = self.scope
            record.life = self.life
            record.status_message = message
            self.record = record
            self.life.deadline = record.deadline
            self._decide("task", record)
        return self.record

    async def drive(self, work: Callable[[ToolContext], Awaitable[dict[str, Any]]]) -> None:
        """Run ``work`` to its end, then keep the task's outcome until its TTL."""
        try:
            with self.life:
                done, value, failure = False, None, None
                with self.scope:
                    try:
                        value = await work(TaskToolContext(self.ctx, self))
                        done = True
                    except trio.Cancelled:
                        raise
                    except BaseException as exc:  # an MRTR round or a failure: reported
                        failure = exc
                self._settle(done, value, failure)
                if self.record is not None:
                    await trio.sleep_forever()  # keep the outcome until the TTL
            record = self.record
            if record is not None and not record.terminal:
                record.fail(INTERNAL_ERROR, "The task expired before it finished.")
        finally:
            if self.record is not None:
                self.store.forget(self.record)
            self._decide("error", McpError(INTERNAL_ERROR, "Internal error: the server stopped"))

    def _settle(self, done: bool, value: Any, failure: BaseException | None) -> None:
        record = self.record
        if record is None:  # still the request's: it gets the outcome as it is
            if done:
                self._decide("result", value)
            elif failure is not None:
                self._decide("error", failure)
            return
        if done:
            record.complete(value if record.kind == "core" else {**value, "resultType": "complete"})
        elif failure is None:
            record.cancelled()
        elif isinstance(failure, McpError):
            record.fail(failure.code, failure.message, failure.data)
        else:
            logger.error("task %s failed", record.task_id, exc_info=failure)
            record.fail(INTERNAL_ERROR, "Internal error")


class TaskToolContext(ToolContext):
    """The :class:`ToolContext` of a tool that may run as a task (see the module doc)."""

    __slots__ = ("job",)

    def __init__(self, handler: HandlerContext, job: TaskJob) -> None:
        super().__init__(handler)
        self.job = job

    @property
    def task_id(self) -> str | None:
        """The task's id once the body runs as a task, else ``None``."""
        return None if self.job.record is None else self.job.record.task_id

    @property
    def cancel_scope(self) -> trio.CancelScope:
        """The work's scope: cancelling it cancels the task (or, before the hand-off,
        ends the request without a response)."""
        return self.job.scope

    async def begin_task(self, message: str | None = None) -> bool:
        """Become a task now: the request answers ``CreateTaskResult``; ``message``
        becomes the task's ``statusMessage``."""
        self.job.hand_off(message)
        await trio.lowlevel.checkpoint()
        return True

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress of the request before the hand-off. In a task its ``message`` becomes
        the task's ``statusMessage``; a core task also sends the progress to the
        request's ``progressToken`` (2025-11-25 keeps it valid for the task's life)."""
        job = self.job
        record = job.record
        if record is None:
            await super().report_progress(progress, total, message)
            return
        if message is not None:
            record.describe(message)
        token = self.handler.progress_token
        if record.kind != "core" or token is None:
            await trio.lowlevel.checkpoint()
            return
        if job.last_progress is not None and progress < job.last_progress:
            last = job.last_progress
            raise ValueError(f"progress must not decrease (was {last}, got {progress})")
        job.last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._task_notify(record, "notifications/progress", params)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        record = self.job.record
        if record is None:
            await super().notify(method, params)
        elif record.kind == "core":
            await self._task_notify(record, method, params)
        else:
            await trio.lowlevel.checkpoint()

    async def log(self, level: LoggingLevel | str, data: Any, *, logger: str | None = None) -> None:
        record = self.job.record
        if record is None:
            await super().log(level, data, logger=logger)
            return
        name = level.value if isinstance(level, LoggingLevel) else level
        if record.kind != "core" or not log_level_allows(self.session, name):
            await trio.lowlevel.checkpoint()
            return
        params: dict[str, Any] = {"level": name, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._task_notify(record, "notifications/message", params)

    async def _task_notify(
        self, record: TaskRecord, method: str, params: dict[str, Any] | None
    ) -> None:
        """A notification of a core task: to its session, tagged with the task."""
        body = dict(params or {})
        body["_meta"] = related_task_meta(record.task_id, body.get("_meta"))
        session = record.session
        if session is None or session.is_closed:
            await trio.lowlevel.checkpoint()
            return
        with contextlib.suppress(ConnectionClosedError):  # gone: nobody is left to tell
            await session.notify(method, body)

    def detach_for_background(
        self, fn: Callable[[BackgroundContext, *Ts], Awaitable[object]], *args: *Ts
    ) -> None:
        if self.job.record is not None:
            raise RuntimeError(
                "detach_for_background is not available inside a task: its request has "
                "ended and the task already runs in the background"
            )
        super().detach_for_background(fn, *args)

    async def _reverse(
        self, method: str, params: dict[str, Any] | None = None, key: str | None = None
    ) -> dict[str, Any]:
        record = self.job.record
        if record is None:
            return await super()._reverse(method, params, key)
        return await record.ask(method, params or {}, key)

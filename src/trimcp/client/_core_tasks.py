"""2025-11-25 core tasks on the client: ``client.tasks``.

A handshake-era server that declared ``tasks.requests.tools.call`` runs tools as tasks
when asked (:mod:`trimcp.protocol._core_tasks`). :class:`CoreTaskCalls` speaks that
protocol over a connected :class:`~trimcp.client.Client`:

* :meth:`~CoreTaskCalls.call_tool` asks for a task (``params.task``, optional ``ttl``
  in seconds) and returns the :class:`~trimcp.protocol.CoreTask` the server created;
* :meth:`~CoreTaskCalls.wait` follows it to its end and returns the tool's
  :class:`~trimcp.protocol.CallToolResult`: it polls ``tasks/get`` at the server's
  ``pollInterval`` (clamped to [:data:`MIN_POLL`, :data:`MAX_POLL`] seconds), and wakes
  early on a ``notifications/tasks/status`` for the task. Once the task ends or needs
  input it calls ``tasks/result``, which carries the task's input requests
  (elicitation, sampling, roots) as ordinary requests to the handlers the client was
  opened with, and answers the outcome. A ``tasks/result`` that gets no answer within
  the request timeout is cancelled and polling goes on. A task whose outcome is a
  JSON-RPC error raises it as :class:`~trimcp.dispatch.McpError`; a ``cancelled`` task
  raises :class:`TaskCancelledError`. Bounded by ``timeout`` and :data:`MAX_POLLS`;
* :meth:`~CoreTaskCalls.get`, :meth:`~CoreTaskCalls.result`,
  :meth:`~CoreTaskCalls.list`, :meth:`~CoreTaskCalls.list_all` and
  :meth:`~CoreTaskCalls.cancel` are the four ``tasks/*`` requests.

``Client.call_tool`` uses this by itself for a tool the server lists with
``execution.taskSupport: "required"``, so a caller never has to know.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Final, final

import trio

from trimcp.binding import structure
from trimcp.dispatch import McpError, Registry, RequestTimeoutError
from trimcp.nursery import Session
from trimcp.protocol import (
    RELATED_TASK_META,
    TASK_STATUS_NOTIFICATION,
    CallToolResult,
    CoreTask,
    DetailedTask,
    ListTasksResult,
)
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

from ._pages import all_pages

__all__ = [
    "MAX_POLL",
    "MAX_POLLS",
    "MAX_WATCHED_TASKS",
    "MIN_POLL",
    "CoreTaskCalls",
    "TaskCancelledError",
    "TaskStatusWatch",
]

MIN_POLL: Final = 0.05
"""Seconds: the fastest a task wait polls (either kind), whatever the server says."""
MAX_POLL: Final = 60.0
"""Seconds: the slowest it polls (a server asking for more is not waited on longer)."""
MAX_POLLS: Final = 100_000
"""Bound on the ``tasks/get`` polls of one task wait."""
MAX_WATCHED_TASKS: Final = 1024
"""Tasks whose status notifications one client keeps at once (those being waited on)."""


class TaskCancelledError(Exception):
    """The task (of either kind) ended ``cancelled``: there is no result."""

    def __init__(self, task: CoreTask | DetailedTask) -> None:
        super().__init__(f"task {task.task_id} was cancelled")
        self.task = task


def _task(raw: Any) -> CoreTask:
    if not isinstance(raw, dict):
        raise McpError(INTERNAL_ERROR, "the server sent a task that is not an object")
    members = {key: value for key, value in raw.items() if key != "_meta"}
    return structure(members, CoreTask)


@final
class TaskStatusWatch:
    """The ``notifications/tasks/status`` of the tasks being waited on: each one wakes
    the waits of its task. Notices for other tasks are ignored (nothing is kept for
    them), and at most :data:`MAX_WATCHED_TASKS` tasks are watched at once."""

    def __init__(self) -> None:
        self._wakeups: dict[str, trio.Event] = {}
        self._latest: dict[str, CoreTask] = {}

    def install(self, registry: Registry) -> None:
        registry.add_notification(TASK_STATUS_NOTIFICATION, self._on_status)

    async def _on_status(self, _session: Session, params: dict[str, Any] | None) -> None:
        task_id = params.get("taskId") if isinstance(params, dict) else None
        event = self._wakeups.get(task_id) if isinstance(task_id, str) else None
        if event is None:
            return
        try:
            self._latest[task_id] = _task(params)  # type: ignore[index]
        except Exception:
            return  # a malformed notice is only a hint: polling goes on
        event.set()

    def watch(self, task_id: str) -> bool:
        """Start keeping notices of ``task_id``; ``False`` when too many are watched."""
        if task_id not in self._wakeups and len(self._wakeups) >= MAX_WATCHED_TASKS:
            return False
        self._wakeups.setdefault(task_id, trio.Event())
        return True

    def unwatch(self, task_id: str) -> None:
        self._wakeups.pop(task_id, None)
        self._latest.pop(task_id, None)

    async def next(self, task_id: str, seconds: float) -> CoreTask | None:
        """The task's next notified state within ``seconds`` (``None``: none came)."""
        event = self._wakeups.get(task_id)
        if event is None:
            await trio.sleep(seconds)
            return None
        with trio.move_on_after(seconds):
            await event.wait()
        if not event.is_set():
            return None
        self._wakeups[task_id] = trio.Event()
        return self._latest.pop(task_id, None)


@final
class CoreTaskCalls:
    """The 2025-11-25 core tasks of one client (module doc)."""

    def __init__(
        self, session: Session, watch: TaskStatusWatch, *, stateless: bool = False
    ) -> None:
        self.session = session
        self.watch = watch
        self.stateless = stateless

    async def _request(
        self, method: str, params: dict[str, Any] | None, timeout: float | None = None
    ) -> dict[str, Any]:
        if self.stateless:
            await trio.lowlevel.checkpoint()
            raise McpError(
                METHOD_NOT_FOUND,
                f"{method}: 2025-11-25 core tasks need a handshake-era session "
                "(open_client(era='handshake')); the stateless era has the tasks extension "
                "(trimcp.client.TaskCalls), which client.call_tool uses by itself",
            )
        return await self.session.request(method, params, timeout=timeout)

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, ttl: float | None = None
    ) -> CoreTask:
        """Call tool ``name`` as a task; the server's task (it runs in the background).
        ``ttl`` is the retention asked for, in seconds (the server may shorten it)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params["task"] = {} if ttl is None else {"ttl": max(0, round(ttl * 1000))}
        raw = await self._request("tools/call", params)
        if "task" not in raw:
            raise McpError(
                INTERNAL_ERROR, f"the server answered the task-augmented call of {name} directly"
            )
        return _task(raw["task"])

    async def get(self, task_id: str) -> CoreTask:
        """The task's current state (``tasks/get``)."""
        return _task(await self._request("tasks/get", {"taskId": task_id}))

    async def result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """The task's outcome (``tasks/result``): blocks until the task ends, answering
        its input requests with the client's handlers meanwhile. An error outcome
        raises it. ``timeout`` as for any request."""
        raw = await self._request("tasks/result", {"taskId": task_id}, timeout)
        meta = raw.get("_meta")
        if isinstance(meta, dict) and RELATED_TASK_META in meta:
            rest = {key: value for key, value in meta.items() if key != RELATED_TASK_META}
            raw = {**raw, "_meta": rest} if rest else {k: v for k, v in raw.items() if k != "_meta"}
        return structure(raw, CallToolResult)

    async def list(self, cursor: str | None = None) -> ListTasksResult:
        """One page of the tasks this client may see (``tasks/list``)."""
        params = {"cursor": cursor} if cursor is not None else None
        raw = await self._request("tasks/list", params)
        tasks = raw.get("tasks")
        if not isinstance(tasks, list):
            raise McpError(INTERNAL_ERROR, "tasks/list answer has no tasks list")
        next_cursor = raw.get("nextCursor")
        return ListTasksResult(
            tasks=[_task(item) for item in tasks],
            next_cursor=next_cursor if isinstance(next_cursor, str) else None,
        )

    async def list_all(self) -> builtins.list[CoreTask]:
        """Every task this client may see, following ``nextCursor``."""
        return await all_pages("tasks/list", self.list, lambda page: page.tasks)

    async def cancel(self, task_id: str) -> CoreTask:
        """Ask the server to stop the task (``tasks/cancel``); the task as it now is.
        A task that already ended is ``-32602``."""
        return _task(await self._request("tasks/cancel", {"taskId": task_id}))

    async def wait(self, task: CoreTask | str, *, timeout: float | None = None) -> CallToolResult:
        """Follow the task to its end and return the tool's result (module doc)."""
        task_id = task if isinstance(task, str) else task.task_id
        watched = self.watch.watch(task_id)
        try:
            with trio.fail_after(math.inf if timeout is None else timeout):
                return await self._follow(task_id)
        finally:
            if watched:
                self.watch.unwatch(task_id)

    async def _follow(self, task_id: str) -> CallToolResult:
        state = await self.get(task_id)
        for _ in range(MAX_POLLS):
            if state.status == "cancelled":
                raise TaskCancelledError(state)
            if state.terminal or state.status == "input_required":
                try:
                    return await self.result(task_id)
                except RequestTimeoutError:
                    pass  # still running after the input was given: poll again
                except McpError:
                    state = await self.get(task_id)
                    if state.status == "cancelled":  # cancelled while we waited
                        raise TaskCancelledError(state) from None
                    raise
            interval = (state.poll_interval or 1000) / 1000
            notified = await self.watch.next(task_id, min(max(interval, MIN_POLL), MAX_POLL))
            state = notified if notified is not None else await self.get(task_id)
        raise McpError(INVALID_PARAMS, f"task {task_id} did not end within {MAX_POLLS} polls")

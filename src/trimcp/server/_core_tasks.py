"""2025-11-25 core tasks on the server (``basic/utilities/tasks``), beside the extension.

A server with a tool registered with ``task_support`` declares the ``tasks`` capability
(``list``, ``cancel``, ``requests.tools.call``) to 2025-11-25 sessions, and lists the
tool's ``execution.taskSupport``. In such a session:

* ``tools/call`` with ``params.task`` on an ``"optional"`` or ``"required"`` tool is
  answered at once with ``CreateTaskResult``; the tool body runs as the task, in the
  task nursery of the serving that carried the request (:mod:`._task_host`). The
  requested ``task.ttl`` is honoured up to the store's ``ttl``. The same body serves
  both kinds of tasks and plain calls (:mod:`._task_job`);
* ``tools/call`` without ``task`` runs an ``"optional"`` tool synchronously; a
  ``"required"`` one is ``-32601`` (the spec's MUST), as is ``task`` on a tool that is
  not task-capable;
* ``tasks/get`` answers the task; ``tasks/list`` the tasks this session may see
  (paginated, ``-32602`` for a bad cursor); ``tasks/cancel`` moves a running task to
  ``cancelled`` before answering and cancels its work scope (a task already ended is
  ``-32602``); an unknown, expired or foreign id is ``-32602``;
* ``tasks/result`` blocks until the task ends, then answers exactly what the call
  would have (its result, ``isError`` included, or its JSON-RPC error) with the
  related-task ``_meta``. Meanwhile it carries the task's input requests (its
  ``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``) to the client as reverse calls
  of its own, tagged with the task, and hands the answers back to the body; the task
  is ``input_required`` while one is outstanding. Cancelling a ``tasks/result``
  cancels the reverse calls it carried (the client gets ``notifications/cancelled``)
  and offers their input requests to the next ``tasks/result``;
* every status change is pushed to the creating session as
  ``notifications/tasks/status``.

Sessions of older revisions get no tasks: task-capable tools run synchronously and
``"required"`` ones are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final, final

import trio

from trimcp.dispatch import ConnectionClosedError, McpError
from trimcp.nursery import HandlerContext, Session, SessionState
from trimcp.protocol import (
    TASK_STATUS_NOTIFICATION,
    Feature,
    TaskSupport,
    declares_tool_tasks,
    related_task_meta,
    supports,
)
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND

from ._context import ToolContext
from ._pagination import page_result, paginate
from ._shared_tasks import RemoteTask, SharedTasks
from ._task_host import TaskHost, not_served
from ._task_job import TaskJob
from ._task_store import TaskRecord, TaskStore, TaskView
from ._tools import ToolRegistry

__all__ = ["CoreTasks", "negotiated"]

#: The longest ``task.ttl`` (ms) a request may name; anything larger is just capped.
_MAX_TTL_MS: Final = 2**53


def negotiated(state: SessionState) -> bool:
    """Whether ``state`` is a 2025-11-25 session whose server declared task-augmented
    ``tools/call``."""
    version = state.protocol_version
    return (
        not state.stateless
        and version is not None
        and supports(version, Feature.TASKS)
        and declares_tool_tasks(state.server_capabilities.tasks)
    )


@final
class CoreTasks:
    """The core tasks of one server (module doc)."""

    def __init__(
        self,
        tools: ToolRegistry,
        store: TaskStore,
        host_of: Callable[[Session], TaskHost | None],
        page_size: Callable[[], int],
    ) -> None:
        self.tools = tools
        self.store = store
        self.host_of = host_of
        self.page_size = page_size
        #: Writes a notification to a session of a shared store, wherever it is served
        #: (``None``: no shared store).
        self.notify_elsewhere: Callable[[str, str, dict[str, Any]], None] | None = None

    # -- tools/call ----------------------------------------------------------------------
    async def call_tool(
        self, ctx: HandlerContext, params: dict[str, Any], support: TaskSupport
    ) -> dict[str, Any]:
        """A ``tools/call`` in a handshake-era session (module doc)."""
        name = params["name"]
        task = params.get("task")
        if task is None or not negotiated(ctx.session):
            if support == "required":
                raise McpError(
                    METHOD_NOT_FOUND,
                    f"Tool {name} requires task augmentation (taskSupport: 'required'): "
                    "call it with params.task",
                )
            return await self.tools.call(ToolContext(ctx), params)
        if support == "forbidden":
            raise McpError(METHOD_NOT_FOUND, f"Tool {name} does not support task augmentation")
        ttl_ms = _requested_ttl(task)
        host = self.host_of(ctx.session_object)
        if host is None or not host.running:
            raise not_served()
        job = TaskJob(self.store, ctx, kind="core", ttl_ms=ttl_ms)
        record = job.hand_off()
        try:
            host.spawn(partial(job.drive, partial(_call, self.tools, params)))
        except BaseException:
            self.store.forget(record)
            raise
        await trio.lowlevel.checkpoint()
        await self.store.published(record)  # findable everywhere before its id is out
        return {"task": record.core_task()}

    # -- tasks/* -------------------------------------------------------------------------
    async def _find(self, ctx: HandlerContext, params: Any) -> TaskView:
        if not negotiated(ctx.session):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        if not isinstance(params, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: taskId is required")
        return await self.store.lookup(ctx, params.get("taskId"))

    async def get(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        record = await self._find(ctx, params)  # a checkpoint
        return record.core_task()

    async def cancel(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        record = await self._find(ctx, params)
        if record.terminal:
            raise McpError(
                INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{record.status}'"
            )
        if isinstance(record, RemoteTask):  # its process cancels it
            await self.shared().order(record, op="cancel", core=True)
            return record.cancelled_view()
        assert isinstance(record, TaskRecord)
        record.cancelled()  # the spec: cancelled before the answer, and for good
        record.scope.cancel()
        await trio.lowlevel.checkpoint()
        return record.core_task()

    def shared(self) -> SharedTasks:
        mirror = self.store.mirror
        assert isinstance(mirror, SharedTasks)
        return mirror

    async def list(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        if not negotiated(ctx.session):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        cursor = params.get("cursor") if isinstance(params, dict) else None
        records = await self.store.listed_everywhere(ctx)
        page, next_cursor = paginate("tasks", records, cursor, self.page_size())
        await trio.lowlevel.checkpoint()
        return page_result("tasks", [record.core_task() for record in page], next_cursor)

    async def result(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        found = await self._find(ctx, params)
        if isinstance(found, RemoteTask):
            return _outcome(await self.shared().result(ctx, found))
        assert isinstance(found, TaskRecord)
        record = found
        async with trio.open_nursery() as carriers:
            while not record.terminal:
                for key in [key for key in record.pending if key not in record.claimed]:
                    record.claimed.add(key)
                    carriers.start_soon(_carry, ctx, record, key)
                await record.wait_changed()
            carriers.cancel_scope.cancel()  # the task ended: nothing more to ask
        return _outcome(record)

    # -- status notifications ----------------------------------------------------------
    def changed(self, record: TaskRecord) -> None:
        """Tell the session that created ``record`` of its new status. With a shared
        store the session may be served elsewhere now: its standalone stream is
        written through the store (:attr:`notify_elsewhere`)."""
        session = record.session
        if session is not None and not session.is_closed:
            session.notify_soon(TASK_STATUS_NOTIFICATION, record.core_task())
        elif self.notify_elsewhere is not None and record.session_id is not None:
            self.notify_elsewhere(record.session_id, TASK_STATUS_NOTIFICATION, record.core_task())


def _outcome(record: TaskView) -> dict[str, Any]:
    """What ``tasks/result`` answers for a task that ended: exactly what the call would
    have (its result, ``isError`` included, or its error), tagged with the task."""
    if record.result is not None:
        result = record.result
        return {**result, "_meta": related_task_meta(record.task_id, result.get("_meta"))}
    error = record.error or {}
    if record.status == "cancelled" or not error:
        raise McpError(INVALID_PARAMS, f"Task {record.task_id} was cancelled: it has no result")
    raise McpError(int(error.get("code", -32603)), str(error.get("message")), error.get("data"))


async def _carry(ctx: HandlerContext, record: TaskRecord, key: str) -> None:
    """Send input request ``key`` of ``record`` to the client as a reverse call of the
    ``tasks/result`` of ``ctx``; its answer (or error) goes to the task's body."""
    request = record.pending.get(key)
    if request is None:
        return
    params = dict(request["params"])
    params["_meta"] = related_task_meta(record.task_id, params.get("_meta"))
    answered = False
    try:
        try:
            answer: dict[str, Any] | McpError = await ctx.request(request["method"], params)
        except ConnectionClosedError:
            return  # nobody to ask on this session: offered to another tasks/result
        except McpError as exc:  # the client's error (or none in time) is the answer
            answer = exc
        record.reply(key, answer)
        answered = True
    finally:
        if not answered:  # this tasks/result went away first: offer it again
            record.release(key)


def _requested_ttl(task: Any) -> int | None:
    if not isinstance(task, dict):
        raise McpError(INVALID_PARAMS, "Invalid params: task must be an object")
    ttl = task.get("ttl")
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl < 0:
        raise McpError(INVALID_PARAMS, "Invalid params: task.ttl must be a non-negative number")
    return int(min(ttl, _MAX_TTL_MS))


async def _call(tools: ToolRegistry, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    body = {key: value for key, value in params.items() if key != "task"}
    return await tools.call(ctx, body)

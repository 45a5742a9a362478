"""The tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663) on the server.

A tool opts in at registration: ``@server.tool(task_support="optional")`` (the server
runs it as a task whenever the request declared the extension, else synchronously) or
``"required"`` (a request that did not declare it gets ``-32021`` with
``requiredCapabilities.extensions``, before the tool runs). The body is the same in
every case; see :mod:`._task_job` for how it runs and when the task begins.

Negotiation is per request: only a stateless-era request whose own
``clientCapabilities`` list the extension gets a ``CreateTaskResult`` or may use
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (others: ``-32021``). A handshake
-era session gets the 2025-11-25 core tasks instead (:mod:`._core_tasks`): the same
tools, the same table, another protocol. ``tasks/get`` and ``tasks/cancel`` exist in
both; each request is routed by its era.

* ``tasks/get`` answers the ``DetailedTask`` of the current status;
* ``tasks/update`` delivers ``inputResponses`` to outstanding input requests (others
  ignored) and acknowledges;
* ``tasks/cancel`` cancels exactly that task's work scope and acknowledges; a task that
  already ended keeps its outcome (cancellation is cooperative and the ack idempotent);
* an unknown id, an expired task or another principal's task: ``-32602``.

Status changes are pushed as ``notifications/tasks`` to ``subscriptions/listen`` streams
that asked for the task's id in ``notifications.taskIds`` (asking without the extension
is ``-32021``); the acknowledgement lists the ids agreed to.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final, final

from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext, Session, SessionState
from trimcp.protocol import (
    TASK_RESULT_TYPE,
    TASKS_EXTENSION,
    Feature,
    TaskSupport,
    core_tasks_capability,
    supports,
)
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND

from ._context import CapabilityError, ToolContext
from ._core_tasks import CoreTasks
from ._shared_tasks import RemoteTask
from ._task_host import TaskHost, not_served
from ._task_job import TaskJob
from ._task_store import TaskRecord, TaskStore, TaskView
from ._tools import ToolRegistry

__all__ = ["MAX_LISTEN_TASK_IDS", "TaskHandoff", "TaskRunner"]

logger = logging.getLogger("trimcp.server.tasks")

MAX_LISTEN_TASK_IDS: Final = 256
"""Task ids one ``subscriptions/listen`` may ask status notifications for."""

TaskHandoff = str
"""``"start"`` (the task begins before the body runs) or ``"explicit"``
(at ``await ctx.begin_task()``)."""

_REQUIRED: Final[dict[str, Any]] = {"extensions": {TASKS_EXTENSION: {}}}

Handler = Callable[[HandlerContext, Any], Awaitable[Any]]
Route = tuple[Handler, None]


def _declared(state: SessionState) -> bool:
    extensions = state.client_capabilities.extensions
    return state.stateless and isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _missing() -> CapabilityError:
    """A stateless-era request without the extension (the handshake era has core tasks)."""
    return CapabilityError(TASKS_EXTENSION, required=_REQUIRED)


@final
class TaskRunner:
    """Task-capable tools and the ``tasks/*`` methods of one server (module doc)."""

    def __init__(
        self,
        tools: ToolRegistry,
        store: TaskStore,
        publish: Callable[[str, dict[str, Any]], None],
        host_of: Callable[[Session], TaskHost | None],
        page_size: Callable[[], int],
    ) -> None:
        self.tools = tools
        self.store = store
        self.host_of = host_of
        self._support: dict[str, tuple[TaskSupport, TaskHandoff]] = {}
        self._publish = publish
        self.core = CoreTasks(tools, store, host_of, page_size)
        store.on_change = self._changed

    def set_support(self, name: str, support: TaskSupport, handoff: TaskHandoff) -> None:
        """Record how tool ``name`` runs as a task (``"forbidden"``: never)."""
        if support not in ("forbidden", "optional", "required"):
            raise ValueError(f"task_support must be forbidden, optional or required: {support!r}")
        if handoff not in ("start", "explicit"):
            raise ValueError(f"task_handoff must be 'start' or 'explicit': {handoff!r}")
        if support == "forbidden":
            self._support.pop(name, None)
        else:
            self._support[name] = (support, handoff)

    @property
    def enabled(self) -> bool:
        """Whether some registered tool can run as a task (then the extension is declared)."""
        return any(name in self.tools for name in self._support)

    def support(self, name: str) -> TaskSupport:
        """How tool ``name`` may run as a task."""
        return self._support.get(name, ("forbidden", "start"))[0]

    def core_capability(self, version: str) -> dict[str, Any] | None:
        """The ``tasks`` capability an ``initialize`` of ``version`` declares, if any."""
        if not (self.enabled and supports(version, Feature.TASKS)):
            return None
        return core_tasks_capability()

    def listed(self, name: str, wire: dict[str, Any], version: str) -> dict[str, Any]:
        """A tool as ``tools/list`` of ``version`` shows it: with ``execution.taskSupport``
        where the revision has it and the tool may run as a task."""
        support = self.support(name)
        if support == "forbidden" or not supports(version, Feature.TASKS):
            return wire
        return {**wire, "execution": {"taskSupport": support}}

    def advertise(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """``server/discover`` capabilities with the extension added when enabled."""
        if not self.enabled:
            return capabilities
        extensions = dict(capabilities.get("extensions") or {})
        extensions[TASKS_EXTENSION] = {}
        return {**capabilities, "extensions": extensions}

    # -- tools/call ----------------------------------------------------------------------
    def handles(self, params: Any) -> bool:
        """Whether this ``tools/call`` names a task-capable tool, or asks for a task."""
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return False  # malformed: tools/call itself says so (-32602)
        # a removed tool is unknown
        return (name in self._support or "task" in params) and name in self.tools

    async def call_tool(self, ctx: HandlerContext, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a ``tools/call`` of a task-capable tool: synchronously, or as a task."""
        support, handoff = self._support.get(params["name"], ("forbidden", "start"))
        state = ctx.session
        if not state.stateless:
            return await self.core.call_tool(ctx, params, support)
        host = self.host_of(ctx.session_object)
        running = host is not None and host.running
        if (
            support == "forbidden"
            or not _declared(state)
            or (support == "optional" and not running)
        ):
            if support == "required":
                raise _missing() if not _declared(state) else not_served()
            return await self.tools.call(ToolContext(ctx), params)
        if host is None or not running:
            raise not_served()
        job = TaskJob(self.store, ctx)
        work = partial(_call, self.tools, params)
        if handoff == "start":
            job.hand_off()
        host.spawn(partial(job.drive, work))
        try:
            await job.decided.wait()
        finally:
            if job.record is None:  # the request ended first: so does its work
                job.scope.cancel()
        kind, value = job.outcome
        if kind == "task":
            record: TaskRecord = value
            await self.store.published(record)  # findable everywhere before its id is out
            return {**record.task(), "resultType": TASK_RESULT_TYPE}
        if kind == "error":
            raise value
        result: dict[str, Any] = value
        return result

    # -- tasks/* -------------------------------------------------------------------------
    def routes(self) -> dict[str, Route]:
        """The methods of both kinds of tasks, for the server's method table; each
        request goes to its era's (module doc)."""
        core = self.core
        return {
            "tasks/get": (_by_era(core.get, self._get), None),
            "tasks/result": (_by_era(core.result, None), None),
            "tasks/list": (_by_era(core.list, None), None),
            "tasks/update": (_by_era(None, self._update), None),
            "tasks/cancel": (_by_era(core.cancel, self._cancel), None),
        }

    async def _find(self, ctx: HandlerContext, params: Any) -> TaskView:
        state = ctx.session
        if not state.stateless:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        if not _declared(state):
            raise _missing()
        if not isinstance(params, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: taskId is required")
        return await self.store.lookup(ctx, params.get("taskId"))

    async def _get(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return (await self._find(ctx, params)).detailed()

    async def _update(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        record = await self._find(ctx, params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        if record.terminal:
            return {}
        if isinstance(record, RemoteTask):  # checked here, answered where it runs
            await self.core.shared().answer(record, responses)
        elif isinstance(record, TaskRecord):
            record.answer(responses)
        return {}

    async def _cancel(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        record = await self._find(ctx, params)
        if record.terminal:
            return {}
        if isinstance(record, RemoteTask):
            await self.core.shared().order(record, op="cancel")
        elif isinstance(record, TaskRecord):
            record.scope.cancel()
        return {}

    # -- status notifications ----------------------------------------------------------------
    async def listen_params(self, ctx: HandlerContext, params: dict[str, Any]) -> dict[str, Any]:
        """``subscriptions/listen`` params with ``taskIds`` cut to the ids agreed to:
        tasks this request may see. Asking without the extension is ``-32021``."""
        filter_ = params.get("notifications")
        if not isinstance(filter_, dict) or "taskIds" not in filter_:
            return params
        ids = filter_["taskIds"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise McpError(INVALID_PARAMS, "Invalid params: taskIds must be a list of strings")
        if len(ids) > MAX_LISTEN_TASK_IDS:
            raise McpError(INVALID_PARAMS, f"Invalid params: at most {MAX_LISTEN_TASK_IDS} taskIds")
        if not _declared(ctx.session):
            raise _missing()
        agreed: list[str] = []
        for task_id in dict.fromkeys(ids):
            try:
                await self.store.lookup(ctx, task_id)
            except McpError:
                continue
            agreed.append(task_id)
        return {**params, "notifications": {**filter_, "taskIds": agreed}}

    def _changed(self, record: TaskRecord) -> None:
        if record.kind == "core":
            self.core.changed(record)
        else:
            self._publish("notifications/tasks", record.detailed())


def _by_era(handshake: Handler | None, stateless: Handler | None) -> Handler:
    """One route for a ``tasks/*`` method: the core handler for a handshake-era request,
    the extension's for a stateless one; ``-32601`` where the era lacks the method."""

    def route(ctx: HandlerContext, params: Any) -> Awaitable[Any]:
        handler = stateless if ctx.session.stateless else handshake
        if handler is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        return handler(ctx, params)

    return route


async def _call(tools: ToolRegistry, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return await tools.call(ctx, params)

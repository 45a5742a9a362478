"""The tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663) on the client side.

:class:`TaskCalls` speaks the extension over any *requester*: an ``async (method,
params) -> result`` that sends one stateless-era request (its ``_meta`` carrying the
version and the per-request client capabilities, which must list the extension).
:func:`stateless_requester` builds one over a connected :class:`~trimcp.client.Client`.

* :meth:`TaskCalls.call_tool` returns either shape a server may answer with: the tool's
  :class:`~trimcp.protocol.CallToolResult`, or a :class:`~trimcp.protocol.Task` when the
  server chose to run the call as a task (it alone decides). Input the server asks for
  before deciding (MRTR ``input_required`` rounds) is answered on the way, echoing
  ``requestState`` exactly.
* :meth:`TaskCalls.wait` follows a task to its end: it polls ``tasks/get`` at the
  server's ``pollIntervalMs`` (clamped to [:data:`MIN_POLL`, :data:`MAX_POLL`] seconds),
  answers each new input request once (keys are deduplicated across polls) through
  ``tasks/update``, and returns the tool's result; a ``failed`` task raises its
  JSON-RPC error as :class:`~trimcp.dispatch.McpError`, a ``cancelled`` one
  :class:`TaskCancelledError`. It is bounded by ``timeout`` and :data:`MAX_POLLS`.
* :meth:`TaskCalls.cancel` asks the server to stop a task (``tasks/cancel``).

Input requests are answered by one ``respond(method, params) -> result`` callable:
:func:`client_responder` routes them to the sampling / elicitation / roots handlers the
:class:`~trimcp.client.Client` was opened with (each one gets a context of its own,
cancelled if the wait is), and :func:`input_responder` builds one from typed handlers.
The same trust applies as to direct sampling and elicitation: a task is not a more
trusted channel.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

import trio

from trimcp.binding import structure, unstructure
from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext
from trimcp.protocol import (
    CLIENT_CAPABILITIES_META,
    CLIENT_INFO_META,
    LATEST_VERSION,
    PROTOCOL_VERSION_META,
    TASK_RESULT_TYPE,
    TASKS_EXTENSION,
    CallToolResult,
    CreateMessageParams,
    CreateMessageResult,
    DetailedTask,
    ElicitParams,
    ElicitResult,
    ListRootsResult,
    Root,
    Task,
)
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND

from ._client import Client
from ._core_tasks import MAX_POLL, MAX_POLLS, MIN_POLL, TaskCancelledError

__all__ = [
    "MAX_INPUT_ROUNDS",
    "MAX_POLL",
    "MAX_POLLS",
    "MIN_POLL",
    "InputResponder",
    "Requester",
    "TaskCalls",
    "TaskCancelledError",
    "client_responder",
    "input_responder",
    "stateless_requester",
]

Requester = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
InputResponder = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

MAX_INPUT_ROUNDS: Final = 16
"""Bound on the MRTR rounds of one :meth:`TaskCalls.call_tool`."""


def stateless_requester(
    client: Client,
    *,
    capabilities: dict[str, Any] | None = None,
    version: str = LATEST_VERSION,
) -> Requester:
    """Send requests through ``client`` as stateless-era requests that declare the
    tasks extension (plus ``capabilities``, raw wire form) in their ``_meta``."""
    caps = dict(
        capabilities if capabilities is not None else unstructure(client.state.client_capabilities)
    )
    caps["extensions"] = {**(caps.get("extensions") or {}), TASKS_EXTENSION: {}}
    info = unstructure(client.state.client_info) if client.state.client_info else None

    async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = dict(params.get("_meta") or {})
        meta[PROTOCOL_VERSION_META] = version
        meta[CLIENT_CAPABILITIES_META] = caps
        if info is not None:
            meta[CLIENT_INFO_META] = info
        return await client.request(method, {**params, "_meta": meta})

    return send


_INPUT_IDS = itertools.count(1)


def client_responder(client: Client) -> InputResponder:
    """Answer input requests with the handlers ``client`` was opened with (its
    ``sampling``, ``elicitation`` and ``roots``), exactly as if the server had sent each
    one as a request; a method without a handler is ``-32601``."""
    session = client.session

    async def respond(method: str, params: dict[str, Any]) -> dict[str, Any]:
        route = session.registry.route(method)
        if route is None or method not in _INPUT_METHODS:
            raise McpError(METHOD_NOT_FOUND, f"no handler for {method}")
        scope = trio.CancelScope()
        ctx = HandlerContext(session, f"task-input-{next(_INPUT_IDS)}", method, params, {}, scope)
        if route.params_type is not None:
            ctx.params = structure(params, route.params_type)
        try:
            with scope:
                result: dict[str, Any] = await route.handler(ctx, ctx.params)
                return result
        finally:
            ctx._close()  # its hooks fail clearly from now on, as after any request
        raise McpError(INVALID_PARAMS, f"the {method} handler was cancelled")

    return respond


_INPUT_METHODS: Final = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})


def input_responder(
    *,
    sampling: Callable[[CreateMessageParams], Awaitable[CreateMessageResult]] | None = None,
    elicitation: Callable[[ElicitParams], Awaitable[ElicitResult]] | None = None,
    roots: Callable[[], Awaitable[list[Root]]] | None = None,
) -> InputResponder:
    """One :data:`InputResponder` from typed handlers; a request without a handler is
    ``-32601`` (the client should not have declared that capability)."""

    async def respond(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "sampling/createMessage" and sampling is not None:
            return unstructure(await sampling(structure(params, CreateMessageParams)))  # type: ignore[no-any-return]
        if method == "elicitation/create" and elicitation is not None:
            return unstructure(await elicitation(structure(params, ElicitParams)))  # type: ignore[no-any-return]
        if method == "roots/list" and roots is not None:
            return unstructure(ListRootsResult(roots=list(await roots())))  # type: ignore[no-any-return]
        raise McpError(METHOD_NOT_FOUND, f"no handler for {method}")

    return respond


@final
class TaskCalls:
    """Tool calls that may become tasks, and the ``tasks/*`` methods (module doc).

    Args:
      request: sends one stateless-era request declaring the extension.
      respond: answers input requests (MRTR rounds and ``input_required`` tasks);
        without it such a call raises ``-32602``.
    """

    def __init__(self, request: Requester, *, respond: InputResponder | None = None) -> None:
        self.request = request
        self.respond = respond

    async def _answer(self, requests: dict[str, Any]) -> dict[str, Any]:
        if self.respond is None:
            raise McpError(INVALID_PARAMS, "the server asks for input and no responder is set")
        out: dict[str, Any] = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise McpError(INVALID_PARAMS, f"malformed input request {key!r}")
            out[key] = await self.respond(request["method"], dict(request.get("params") or {}))
        return out

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> CallToolResult | Task:
        """Call a tool: its result, or the :class:`Task` the server created for it."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        retry = params
        for _ in range(MAX_INPUT_ROUNDS):
            raw = await self.request("tools/call", retry)
            kind = raw.get("resultType", "complete")
            if kind == TASK_RESULT_TYPE:
                return structure(_task_members(raw, Task), Task)
            if kind != "input_required":
                return structure(_without(raw, "resultType"), CallToolResult)
            retry = dict(params)
            retry["inputResponses"] = await self._answer(raw.get("inputRequests") or {})
            if "requestState" in raw:
                retry["requestState"] = raw["requestState"]
        raise McpError(INVALID_PARAMS, f"more than {MAX_INPUT_ROUNDS} input rounds for {name}")

    async def call_tool_result(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallToolResult:
        """Call a tool and return its result, following a task to its end if one is made."""
        outcome = await self.call_tool(name, arguments)
        if isinstance(outcome, Task):
            return await self.wait(outcome, timeout=timeout)
        return outcome

    async def get(self, task_id: str) -> DetailedTask:
        """The task's current state (``tasks/get``)."""
        raw = await self.request("tasks/get", {"taskId": task_id})
        return structure(_task_members(raw, DetailedTask), DetailedTask)

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        """Answer outstanding input requests of a task (``tasks/update``)."""
        await self.request("tasks/update", {"taskId": task_id, "inputResponses": responses})

    async def cancel(self, task_id: str) -> None:
        """Ask the server to stop the task (``tasks/cancel``; it may still end otherwise)."""
        await self.request("tasks/cancel", {"taskId": task_id})

    async def wait(self, task: Task | str, *, timeout: float | None = None) -> CallToolResult:
        """Poll the task to its end and return the tool's result (module doc)."""
        task_id = task if isinstance(task, str) else task.task_id
        answered: set[str] = set()
        with trio.fail_after(math.inf if timeout is None else timeout):
            for _ in range(MAX_POLLS):
                state = await self.get(task_id)
                if state.status == "completed":
                    return structure(_without(state.result or {}, "resultType"), CallToolResult)
                if state.status == "failed":
                    error = state.error or {}
                    raise McpError(
                        int(error.get("code", -32603)),
                        str(error.get("message", "the task failed")),
                        error.get("data"),
                    )
                if state.status == "cancelled":
                    raise TaskCancelledError(state)
                fresh = {
                    key: request
                    for key, request in (state.input_requests or {}).items()
                    if key not in answered
                }
                if fresh:
                    responses = await self._answer(fresh)
                    answered.update(fresh)
                    await self.update(task_id, responses)
                    continue
                interval = (state.poll_interval_ms or 1000) / 1000
                await trio.sleep(min(max(interval, MIN_POLL), MAX_POLL))
        raise McpError(INVALID_PARAMS, f"task {task_id} did not end within {MAX_POLLS} polls")


_TASK_KEYS: Final = frozenset(
    {
        "taskId",
        "status",
        "statusMessage",
        "createdAt",
        "lastUpdatedAt",
        "ttlMs",
        "pollIntervalMs",
    }
)
_DETAIL_KEYS: Final = _TASK_KEYS | {"inputRequests", "result", "error"}


def _task_members(raw: dict[str, Any], kind: type[Task]) -> dict[str, Any]:
    """The members of ``kind`` in a result (``resultType`` and ``_meta`` left out)."""
    keys = _DETAIL_KEYS if kind is DetailedTask else _TASK_KEYS
    return {key: value for key, value in raw.items() if key in keys}


def _without(raw: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in raw.items() if key not in keys}

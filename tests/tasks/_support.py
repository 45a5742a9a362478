"""Shared pieces of the tasks-extension tests: a server with task-capable tools, a raw
stateless-era requester over an in-memory connection, and a recorder that validates
every message either side sends against the ext-tasks (or 2026-07-28) schema."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import jsonschema
import trio

import trimcp
from trimcp.dispatch import CallNext, McpError, Middlewares
from trimcp.server import TaskStore
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"


@functools.cache
def _validator(schema: str, definition: str) -> Any:
    root = json.loads((SCHEMAS / schema / "schema.json").read_text())
    assert definition in root["$defs"], (schema, definition)
    return jsonschema.validators.validator_for(root)({**root, "$ref": f"#/$defs/{definition}"})


def check(schema: str, definition: str, value: Any) -> None:
    """Fail listing every violation of ``value`` against ``definition`` of ``schema``."""
    errors = sorted(_validator(schema, definition).iter_errors(value), key=str)
    assert not errors, (schema, definition, value, [e.message for e in errors])


EXT = "io.modelcontextprotocol/tasks"
VERSION = "2026-07-28"
WITH_TASKS: dict[str, Any] = {"extensions": {EXT: {}}, "elicitation": {}, "sampling": {}}
WITHOUT_TASKS: dict[str, Any] = {"elicitation": {}}

#: ext-tasks definitions of each result, by request method.
EXT_RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/update": "UpdateTaskResult",
    "tasks/cancel": "CancelTaskResult",
}
EXT_REQUESTS = {
    "tasks/get": "GetTaskRequest",
    "tasks/update": "UpdateTaskRequest",
    "tasks/cancel": "CancelTaskRequest",
}
CORE_RESULTS = {
    "tools/call": "CallToolResult",
    "server/discover": "DiscoverResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}


def meta(caps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        **extra,
    }


class Recorder:
    """Records what the server sends and receives; :meth:`validate` checks it all."""

    def __init__(self) -> None:
        self.sent: list[tuple[Message, str | None]] = []
        self.received: list[Message] = []
        self._methods: dict[Any, str] = {}

    def install(self, middlewares: Middlewares) -> None:
        middlewares.server_recv.add(self._recv)
        middlewares.server_send.add(self._send)

    async def _recv(self, message: Message, call_next: CallNext) -> None:
        self.received.append(message)
        if isinstance(message, Request):
            self._methods[message.id] = message.method
        await call_next(message)

    async def _send(self, message: Message, call_next: CallNext) -> None:
        method = self._methods.get(message.id) if isinstance(message, Response) else None
        self.sent.append((message, method))
        await call_next(message)

    def validate(self) -> Counter[str]:
        """Check every stateless-era message; count the definitions checked."""
        seen: Counter[str] = Counter()
        refused = {m.id for m, _ in self.sent if isinstance(m, ErrorResponse)}
        for message in self.received:  # requests the server accepted (tests send bad ones)
            if (
                isinstance(message, Request)
                and message.method in EXT_REQUESTS
                and message.id not in refused
            ):
                check("ext-tasks", EXT_REQUESTS[message.method], to_value(message))
                seen[EXT_REQUESTS[message.method]] += 1
        for message, method in self.sent:
            value = to_value(message)
            if isinstance(message, ErrorResponse):
                check(VERSION, "JSONRPCErrorResponse", value)
                seen["JSONRPCErrorResponse"] += 1
            elif isinstance(message, Notification) and message.method == "notifications/tasks":
                check("ext-tasks", "TaskStatusNotification", value)
                seen["TaskStatusNotification"] += 1
            elif isinstance(message, Response) and isinstance(message.result, dict):
                result = message.result
                target = _result_definition(method, result)
                if target is None:
                    continue
                schema, definition = target
                check(schema, definition, result)
                if definition == "GetTaskResult" and result["status"] == "completed":
                    check(VERSION, "CallToolResult", result["result"])
                seen[definition] += 1
        return seen


def _result_definition(method: str | None, result: dict[str, Any]) -> tuple[str, str] | None:
    """(schema, definition) a stateless-era result must match; ``None``: not checked."""
    kind = result.get("resultType")
    if kind is None:
        return None  # a handshake-era answer
    if kind == "task":
        assert method == "tools/call", method  # only tools/call may create a task
        return "ext-tasks", "CreateTaskResult"
    if kind == "input_required":
        return VERSION, "InputRequiredResult"
    if method in EXT_RESULTS:
        return "ext-tasks", EXT_RESULTS[method]
    if method in CORE_RESULTS:
        return VERSION, CORE_RESULTS[method]
    return None


def task_server(store: TaskStore | None = None) -> tuple[trimcp.Server, Recorder, Probe]:
    """A server with one tool of each kind the tests need."""
    server = trimcp.Server("tasks-test", version="1.0", tasks=store)
    recorder = Recorder()
    recorder.install(server.middlewares)
    probe = Probe()

    @server.tool()
    async def plain(text: str) -> str:
        """Never a task."""
        return f"plain {text}"

    @server.tool(task_support="optional")
    async def gated(ctx: trimcp.ToolContext, name: str) -> str:
        """Waits for the test's go, then greets; records its cancellation."""
        probe.started.set()
        try:
            await probe.go.wait()
        except trio.Cancelled:
            probe.cancelled += 1
            raise
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def sleeper(ctx: trimcp.ToolContext, seconds: float) -> str:
        """Sleeps, then reports; says how far it got halfway."""
        await trio.sleep(seconds / 2)
        await ctx.report_progress(50, 100, "halfway")
        await ctx.log("info", "not sent for a task")
        await trio.sleep(seconds / 2)
        return f"slept {seconds:g}"

    @server.tool(task_support="required")
    async def tool_error() -> str:
        """Ends in a tool error (a completed task with isError)."""
        raise trimcp.ToolError("bad input")

    @server.tool(task_support="optional")
    async def protocol_error() -> str:
        """Ends in a JSON-RPC error (a failed task)."""
        raise McpError(-32603, "Internal error: it broke", {"why": "test"})

    @server.tool(task_support="optional")
    async def two_questions(ctx: trimcp.ToolContext) -> str:
        """Asks two things at once."""
        answers: dict[str, Any] = {}

        async def ask(which: str) -> None:
            _, answers[which] = await ctx.elicit(which, {"type": "object", "properties": {}})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "first?")
            nursery.start_soon(ask, "second?")
        return f"{answers['first?']} {answers['second?']}"

    @server.tool(task_support="optional", task_handoff="explicit")
    async def held(ctx: trimcp.ToolContext) -> str:
        """Waits for the go as part of its request, then becomes a task."""
        probe.started.set()
        try:
            await probe.go.wait()
        except trio.Cancelled:
            probe.cancelled += 1
            raise
        return f"task: {await ctx.begin_task()}"

    @server.tool(task_support="required", task_handoff="explicit")
    async def confirm_then_run(ctx: trimcp.ToolContext) -> str:
        """Asks for a name in the call, then becomes a task."""
        probe.started.set()
        _, content = await ctx.elicit(
            "name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        name = (content or {}).get("name")
        became = await ctx.begin_task("running")
        probe.task_ids.append(getattr(ctx, "task_id", None))
        await trio.sleep(1)
        return f"ran for {name} (task: {became})"

    return server, recorder, probe


class Probe:
    """What the test tools report back."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.go = trio.Event()
        self.cancelled = 0
        self.task_ids: list[str | None] = []


Send = Callable[..., Awaitable[dict[str, Any]]]


@asynccontextmanager
async def connected(
    server: trimcp.Server, **client_options: Any
) -> AsyncIterator[tuple[trimcp.Client, Send]]:
    """A client on an in-memory connection and ``send(method, params, caps=...)``,
    which sends one stateless-era request (raising ``McpError`` for an error)."""
    async with trimcp.open_client(server.in_memory(), **client_options, era="handshake") as client:

        async def send(
            method: str, params: dict[str, Any] | None = None, caps: dict[str, Any] = WITH_TASKS
        ) -> dict[str, Any]:
            body = dict(params or {})
            body["_meta"] = {**meta(caps), **body.get("_meta", {})}
            return await client.request(method, body)

        yield client, send


async def error_of(call: Awaitable[Any]) -> McpError:
    """The ``McpError`` ``call`` fails with (the test fails if it does not)."""
    try:
        await call
    except McpError as exc:
        return exc
    raise AssertionError("expected an McpError")

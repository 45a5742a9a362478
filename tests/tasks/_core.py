"""Shared pieces of the 2025-11-25 core-task tests: a wire log that checks every message
the server sends (and every task request it accepts) against the 2025-11-25 schema."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trimcp
from trimcp.protocol import ElicitParams, ElicitResult
from trimcp.wire import ErrorResponse, Notification, Request, Response, to_value

from ._support import Recorder, check

V = "2025-11-25"

#: 2025-11-25 definitions of each result, by request method.
RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/cancel": "CancelTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/result": "CallToolResult",
    "tools/list": "ListToolsResult",
    "initialize": "InitializeResult",
}
REQUESTS = {
    "tasks/get": "GetTaskRequest",
    "tasks/cancel": "CancelTaskRequest",
    "tasks/list": "ListTasksRequest",
    "tasks/result": "GetTaskPayloadRequest",
    "tools/call": "CallToolRequest",
    "elicitation/create": "ElicitRequest",
}


class WireLog(Recorder):
    """Everything the server sent and received; :meth:`validate` checks it against the
    2025-11-25 schema (the recorder's own checks are the stateless era's)."""

    def notices(self, method: str) -> list[dict[str, Any]]:
        return [
            m.params or {}
            for m, _ in self.sent
            if isinstance(m, Notification) and m.method == method
        ]

    def requests(self, method: str) -> list[Request]:
        return [m for m, _ in self.sent if isinstance(m, Request) and m.method == method]

    def validate(self) -> Counter[str]:
        """Check every message against the 2025-11-25 schema; count what was checked."""
        seen: Counter[str] = Counter()
        for message in self.received:
            if isinstance(message, Request) and message.method in REQUESTS:
                check(V, REQUESTS[message.method], to_value(message))
                seen[REQUESTS[message.method]] += 1
        for message, method in self.sent:
            value = to_value(message)
            if isinstance(message, ErrorResponse):
                check(V, "JSONRPCErrorResponse", value)
                seen["JSONRPCErrorResponse"] += 1
            elif isinstance(message, Notification) and message.method.startswith("notifications/"):
                definition = {
                    "notifications/tasks/status": "TaskStatusNotification",
                    "notifications/progress": "ProgressNotification",
                    "notifications/message": "LoggingMessageNotification",
                }.get(message.method)
                if definition is not None:
                    check(V, definition, value)
                    seen[definition] += 1
            elif isinstance(message, Request) and message.method in REQUESTS:
                check(V, REQUESTS[message.method], value)
                seen[REQUESTS[message.method]] += 1
            elif isinstance(message, Response) and isinstance(message.result, dict):
                result = message.result
                if method == "tools/call":
                    definition = "CreateTaskResult" if "task" in result else "CallToolResult"
                else:
                    definition = RESULTS.get(method or "", "")
                if definition:
                    check(V, definition, result)
                    seen[definition] += 1
        return seen


class Answers:
    """An elicitation handler that answers each form with the next queued content."""

    def __init__(self, *contents: dict[str, Any]) -> None:
        self.contents = list(contents)
        self.asked: list[ElicitParams] = []

    async def __call__(self, _ctx: Any, params: ElicitParams) -> ElicitResult:
        self.asked.append(params)
        return ElicitResult(action="accept", content=self.contents.pop(0))


@asynccontextmanager
async def core_client(server: trimcp.Server, **options: Any) -> AsyncIterator[trimcp.Client]:
    async with trimcp.open_client(
        server.in_memory(), protocol_version=V, era="handshake", **options
    ) as client:
        yield client

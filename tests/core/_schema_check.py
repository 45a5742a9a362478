"""Validate what a server sends against the JSON schema of the negotiated revision.

:class:`SchemaCheck` installs itself as a ``server_recv`` / ``server_send`` middleware
pair: it learns the method of every inbound request (so a response can be checked
against the matching ``*Result`` definition) and records every outbound message. Each
recorded message is checked against ``JSONRPCMessage`` and, where the method is known,
against its specific definition. :meth:`SchemaCheck.validate` returns the names of the
definitions it checked, so a test can assert that the kinds it cares about were seen.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema

from trimcp.dispatch import CallNext, Middlewares
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"

#: Result definition of the response to each request method.
RESULT_DEFS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "logging/setLevel": "EmptyResult",
    "sampling/createMessage": "CreateMessageResult",
    "elicitation/create": "ElicitResult",
    "roots/list": "ListRootsResult",
}
#: Definition of each outbound request or notification (checked as a whole message).
MESSAGE_DEFS = {
    "notifications/progress": "ProgressNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "sampling/createMessage": "CreateMessageRequest",
    "elicitation/create": "ElicitRequest",
    "roots/list": "ListRootsRequest",
    "ping": "PingRequest",
}


@functools.cache
def _root(version: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / version / "schema.json").read_text())  # type: ignore[no-any-return]


@functools.cache
def validator(version: str, definition: str) -> Any:
    """A validator for ``definition`` of ``version``'s schema (refs resolved in place)."""
    root = _root(version)
    section = "$defs" if "$defs" in root else "definitions"
    if definition not in root[section]:
        raise KeyError(f"{version} has no definition {definition}")
    schema = {**root, "$ref": f"#/{section}/{definition}"}
    return jsonschema.validators.validator_for(root)(schema)


def check(version: str, definition: str, value: Any) -> None:
    """Raise ``AssertionError`` listing every schema violation of ``value``."""
    errors = sorted(validator(version, definition).iter_errors(value), key=str)
    assert not errors, (version, definition, value, [e.message for e in errors])


class SchemaCheck:
    """Records a server's outbound messages for validation; see the module doc."""

    def __init__(self) -> None:
        self.sent: list[tuple[Message, str | None]] = []
        self._inbound: dict[Any, str] = {}

    def install(self, middlewares: Middlewares) -> SchemaCheck:
        middlewares.server_recv.add(self._on_recv)
        middlewares.server_send.add(self._on_send)
        return self

    async def _on_recv(self, message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request):
            self._inbound[message.id] = message.method
        await call_next(message)

    async def _on_send(self, message: Message, call_next: CallNext) -> None:
        method = None
        if isinstance(message, Response | ErrorResponse):
            method = self._inbound.get(message.id)
        self.sent.append((message, method))
        await call_next(message)

    def validate(self, version: str) -> Counter[str]:
        """Check every recorded message; return how often each definition was checked."""
        seen: Counter[str] = Counter()
        for message, method in self.sent:
            value = to_value(message)
            check(version, "JSONRPCMessage", value)
            seen["JSONRPCMessage"] += 1
            definition: str | None = None
            if isinstance(message, Response) and method in RESULT_DEFS:
                definition = RESULT_DEFS[method]
                check(version, definition, value["result"])
            elif isinstance(message, ErrorResponse):
                definition = "JSONRPCError" if version < "2025-11-25" else "JSONRPCErrorResponse"
                check(version, definition, value)
            elif isinstance(message, Request | Notification) and message.method in MESSAGE_DEFS:
                definition = MESSAGE_DEFS[message.method]
                check(version, definition, value)
            if definition is not None:
                seen[definition] += 1
        return seen

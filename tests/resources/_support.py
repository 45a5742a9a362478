"""Shared tools of the resources tests: a schema recorder and a fixture server.

:class:`Recorder` installs itself as a ``server_recv`` / ``server_send`` middleware pair,
remembers the method of each inbound request and every message the server sends;
:meth:`Recorder.validate` checks each one against a revision's JSON schema: the whole
message against ``JSONRPCMessage``, results against their ``*Result`` definition, errors
and notifications against theirs.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema

import trimcp
from trimcp.dispatch import CallNext
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"
WAIT = 30
HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

RESULT_DEFS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
}
MESSAGE_DEFS = {
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@functools.cache
def _validator(version: str, definition: str) -> Any:
    root = json.loads((SCHEMAS / version / "schema.json").read_text())
    section = "$defs" if "$defs" in root else "definitions"
    assert definition in root[section], (version, definition)
    return jsonschema.validators.validator_for(root)({**root, "$ref": f"#/{section}/{definition}"})


def check(version: str, definition: str, value: Any) -> None:
    errors = sorted(_validator(version, definition).iter_errors(value), key=str)
    assert not errors, (version, definition, value, [e.message for e in errors])


class Recorder:
    """Records what a server sends; see the module doc."""

    def __init__(self, server: trimcp.Server) -> None:
        self.sent: list[tuple[Message, str | None]] = []
        self._inbound: dict[Any, str] = {}
        server.middlewares.server_recv.add(self._on_recv)
        server.middlewares.server_send.add(self._on_send)

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
        """Check every recorded message; count how often each definition was checked."""
        seen: Counter[str] = Counter()
        for message, method in self.sent:
            value = to_value(message)
            check(version, "JSONRPCMessage", value)
            definition: str | None = None
            if isinstance(message, Response) and method in RESULT_DEFS:
                definition = RESULT_DEFS[method]
                check(version, definition, value["result"])
            elif isinstance(message, ErrorResponse):
                definition = "JSONRPCError" if version < "2025-11-25" else "JSONRPCErrorResponse"
                check(version, definition, value)
            elif isinstance(message, Notification) and message.method in MESSAGE_DEFS:
                definition = MESSAGE_DEFS[message.method]
                check(version, definition, value)
            if definition is not None:
                seen[definition] += 1
        return seen


def fixture_server(**options: Any) -> trimcp.Server:
    """A server with a text, a binary and a watched resource and two templates."""
    server = trimcp.Server("resources-test", version="1.0", **options)

    @server.resource("test://static-text", name="Static Text", mime_type="text/plain")
    async def static_text() -> str:
        """A static text resource."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="Static Binary", mime_type="image/png")
    async def static_binary() -> bytes:
        return PNG

    @server.resource("test://watched-resource", title="Watched", mime_type="text/plain")
    async def watched() -> str:
        return "watched"

    @server.resource_template("test://template/{id}/data", mime_type="application/json")
    async def template_data(id: int) -> str:
        """JSON data for an integer id."""
        return json.dumps({"id": id, "templateTest": True})

    @server.resource_template("file:///{+path}", name="files")
    async def files(path: str) -> trimcp.TextResourceContents:
        return trimcp.TextResourceContents(uri=f"file:///{path}", text=path)

    return server

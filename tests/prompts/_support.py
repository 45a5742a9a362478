"""Shared tools of the prompts and completion tests: a schema recorder and a raw peer.

:class:`Recorder` installs itself as a ``server_recv`` / ``server_send`` middleware pair,
remembers the method of each inbound request and every message the server sends, and
:meth:`Recorder.validate` checks each one against the JSON schema of a revision: the
whole message against ``JSONRPCMessage``, results against their ``*Result`` definition,
errors and notifications against theirs.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import jsonschema
import trio

from trimcp.dispatch import CallNext, Middlewares
from trimcp.server import Server
from trimcp.transports import MemoryChannel, memory_channel_pair
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"
WAIT = 30

RESULT_DEFS = {
    "initialize": "InitializeResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}
MESSAGE_DEFS = {"notifications/prompts/list_changed": "PromptListChangedNotification"}


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

    def __init__(self, server: Server) -> None:
        self.sent: list[tuple[Message, str | None]] = []
        self._inbound: dict[Any, str] = {}
        self.install(server.middlewares)

    def install(self, middlewares: Middlewares) -> None:
        middlewares.server_recv.add(self._on_recv)
        middlewares.server_send.add(self._on_send)

    async def _on_recv(self, message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request):
            self._inbound[message.id] = message.method
        await call_next(message)

    async def _on_send(self, message: Message, call_next: CallNext) -> None:
        method = (
            self._inbound.get(message.id) if isinstance(message, Response | ErrorResponse) else None
        )
        self.sent.append((message, method))
        await call_next(message)

    def validate(self, version: str) -> Counter[str]:
        """Check every recorded message; return how often each definition was checked."""
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


@asynccontextmanager
async def raw_peer(server: Server) -> AsyncIterator[MemoryChannel]:
    """Serve ``server`` over a memory pair and yield the hand-driven far end."""
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_channel, server_end)
        try:
            yield client_end
        finally:
            nursery.cancel_scope.cancel()


async def ask(peer: MemoryChannel, id: int, method: str, params: Any = None) -> Message:
    """Send a request and return the reply (which must answer it)."""
    await peer.send(Request(id=id, method=method, params=params))
    with trio.fail_after(WAIT):
        reply = await peer.receive()
    assert getattr(reply, "id", None) == id, reply
    return reply

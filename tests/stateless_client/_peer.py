"""A scripted in-memory MCP server, and a check of what a client sends (2026-07-28 schema).

:class:`ScriptedPeer` is a client transport: the client talks to a task that answers
each request with ``script(message)``: a result ``dict``, an :class:`Err`, or ``None``
for silence. Every message the client sent is recorded in ``received``.

:func:`check_client_message` validates one client message against the 2026-07-28
schema (``tests/data/schemas``): the whole message against its request definition.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import trio

from trimcp.transports import memory_channel_pair
from trimcp.wire import NO_DATA, ErrorObject, ErrorResponse, Message, Request, Response, to_value

SCHEMA = Path(__file__).parent.parent / "data" / "schemas" / "2026-07-28" / "schema.json"

REQUEST_DEFS = {
    "server/discover": "DiscoverRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "prompts/get": "GetPromptRequest",
    "resources/read": "ReadResourceRequest",
    "subscriptions/listen": "SubscriptionsListenRequest",
}


@attrs.frozen
class Err:
    code: int
    message: str
    data: Any = None


Script = Callable[[Request], Awaitable[dict[str, Any] | Err | None]]


@functools.cache
def _validator(definition: str) -> Any:
    root = json.loads(SCHEMA.read_text())
    schema = {"$ref": f"#/$defs/{definition}", "$defs": root["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def check_client_message(message: Message) -> str:
    """Validate a client request against the 2026-07-28 schema; return the definition."""
    assert isinstance(message, Request)
    definition = REQUEST_DEFS[message.method]
    errors = list(_validator(definition).iter_errors(to_value(message)))
    assert not errors, f"{definition}: {[e.message for e in errors]}"
    return definition


class ScriptedPeer:
    """A client transport whose server is ``script`` (see the module doc)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.received: list[Message] = []

    def requests(self, method: str) -> list[Request]:
        return [m for m in self.received if isinstance(m, Request) and m.method == method]

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Any]:
        mine, theirs = memory_channel_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._serve, theirs)
            try:
                yield mine
            finally:
                nursery.cancel_scope.cancel()

    async def _serve(self, channel: Any) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                try:
                    message = await channel.receive()
                except (trio.EndOfChannel, trio.ClosedResourceError):
                    return
                self.received.append(message)
                if isinstance(message, Request):
                    nursery.start_soon(self._answer, channel, message)

    async def _answer(self, channel: Any, request: Request) -> None:
        outcome = await self.script(request)
        if outcome is None:
            return
        if isinstance(outcome, Err):
            data = NO_DATA if outcome.data is None else outcome.data
            error = ErrorObject(code=outcome.code, message=outcome.message, data=data)
            answer: Message = ErrorResponse(id=request.id, error=error)
        else:
            answer = Response(id=request.id, result=outcome)
        with suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            await channel.send(answer)


DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
    "ttlMs": 0,
    "cacheScope": "public",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
}

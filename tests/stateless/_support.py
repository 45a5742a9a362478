"""Shared tools of the stateless-era (2026-07-28) server tests.

* :func:`meta` / :func:`params` build a request's per-request ``_meta``;
* :class:`StatelessCheck` records what a server sends (a ``server_send`` middleware) and
  validates each message against the 2026-07-28 schema: results by the method they
  answer (``InputRequiredResult`` when ``resultType`` says so), errors by their code,
  notifications by their method;
* :func:`demo_server` is a server whose tools use every reverse call, written once for
  both eras.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import jsonschema
import trio

import trimcp
from trimcp.transports import MemoryChannel
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

from ..core._schema_check import MessageRecorder

VERSION: Final = "2026-07-28"
SCHEMA: Final = Path(__file__).parent.parent / "data" / "schemas" / VERSION / "schema.json"
ALL_CAPS: Final = {"sampling": {}, "elicitation": {"form": {}}, "roots": {}}

RESULT_DEFS: Final = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
ERROR_DEFS: Final = {
    -32700: "ParseError",
    -32600: "InvalidRequestError",
    -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError",
    -32603: "InternalError",
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}
NOTIFICATION_DEFS: Final = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}


@functools.cache
def _validator(definition: str) -> Any:
    root = json.loads(SCHEMA.read_text())
    return jsonschema.validators.validator_for(root)({**root, "$ref": f"#/$defs/{definition}"})


def check(definition: str, value: Any) -> None:
    """Raise ``AssertionError`` listing every violation of ``definition`` by ``value``."""
    errors = sorted(_validator(definition).iter_errors(value), key=str)
    assert not errors, (definition, value, [e.message for e in errors])


def meta(
    version: str = VERSION,
    capabilities: dict[str, Any] | None = None,
    *,
    level: str | None = None,
    info: bool = True,
) -> dict[str, Any]:
    """A stateless request's ``_meta``."""
    out: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": (
            dict(ALL_CAPS) if capabilities is None else capabilities
        ),
    }
    if info:
        out["io.modelcontextprotocol/clientInfo"] = {"name": "stateless-test", "version": "1"}
    if level is not None:
        out["io.modelcontextprotocol/logLevel"] = level
    return out


def params(extra: dict[str, Any] | None = None, **meta_args: Any) -> dict[str, Any]:
    """Request params with a stateless ``_meta`` (``meta_args`` go to :func:`meta`)."""
    return {**(extra or {}), "_meta": meta(**meta_args)}


def validate_value(value: dict[str, Any], method: str | None) -> str:
    """Check one wire message (a dict) against the 2026-07-28 schema; the definition."""
    if "error" in value:
        check("JSONRPCErrorResponse", value)
        definition = ERROR_DEFS.get(value["error"].get("code"), "JSONRPCErrorResponse")
        # Some error definitions describe the whole response, others the error object.
        whole = "error" in _validator(definition).schema["$defs"][definition]["properties"]
        check(definition, value if whole else value["error"])
        return definition
    if "result" in value:
        check("JSONRPCResultResponse", value)
        result = value["result"]
        if result.get("resultType") == "input_required":
            definition = "InputRequiredResult"
        else:
            definition = RESULT_DEFS.get(method or "", "Result")
        check(definition, result)
        return definition
    definition = NOTIFICATION_DEFS.get(value.get("method", ""), "JSONRPCNotification")
    check(definition, value)
    return definition


class StatelessCheck(MessageRecorder):
    """Records a server's outbound messages; :meth:`validate` checks them all."""

    def validate(self) -> Counter[str]:
        """Validate every stateless-era message sent (responses to requests that
        carried stateless ``_meta`` and every notification); return the definitions."""
        seen: Counter[str] = Counter()
        for message, method in self.sent:
            assert not isinstance(message, Request), f"a request was sent: {message}"
            seen[validate_value(to_value(message), method)] += 1
        return seen


NAME_SCHEMA: Final = {"type": "object", "properties": {"name": {"type": "string"}}}


async def _ask_one(ctx: trimcp.ToolContext, kind: str, got: dict[str, Any]) -> None:
    if kind == "elicit":
        got[kind] = (await ctx.elicit("Name?", NAME_SCHEMA, key="e"))[1]
    elif kind == "sample":
        got[kind] = (await ctx.sample("Hi?", max_tokens=5, key="s")).content
    else:
        got[kind] = await ctx.list_roots(key="r")


def demo_server(**options: Any) -> trimcp.Server:
    """Tools using each reverse call, the same body for both eras."""
    server = trimcp.Server("stateless-demo", version="2.0", **options)
    runs: Counter[str] = Counter()
    server.runs = runs  # type: ignore[attr-defined]

    name_schema = NAME_SCHEMA

    @server.tool()
    async def greet(ctx: trimcp.ToolContext) -> str:
        """Asks for a name."""
        runs["greet"] += 1
        result, content = await ctx.elicit("Your name?", name_schema)
        if content is None:
            return f"no name ({result.action})"
        return f"Hello, {content['name']}!"

    @server.tool()
    async def ask_model(ctx: trimcp.ToolContext, question: str) -> str:
        """Asks the client's model."""
        result = await ctx.sample(question, max_tokens=10, key="answer")
        return f"model: {getattr(result.content, 'text', '')}"

    @server.tool()
    async def roots(ctx: trimcp.ToolContext) -> str:
        """Lists the client's roots."""
        return ",".join(root.uri for root in await ctx.list_roots())

    @server.tool()
    async def all_at_once(ctx: trimcp.ToolContext) -> str:
        """Three inputs asked concurrently: one round."""
        got: dict[str, Any] = {}
        async with trio.open_nursery() as nursery:
            for kind in ("elicit", "sample", "roots"):
                nursery.start_soon(_ask_one, ctx, kind, got)
        return f"{got['elicit']['name']}|{getattr(got['sample'], 'text', '')}|{len(got['roots'])}"

    @server.tool()
    async def two_steps(ctx: trimcp.ToolContext, topic: str) -> str:
        """Two rounds, one after the other."""
        runs["two_steps"] += 1
        _, first = await ctx.elicit(f"First about {topic}?", name_schema, key="first")
        _, second = await ctx.elicit("Second?", name_schema, key="second")
        return f"{(first or {}).get('name')}+{(second or {}).get('name')}"

    @server.tool()
    async def chatty(ctx: trimcp.ToolContext) -> str:
        """Logs at info level."""
        await ctx.log("info", "chatty ran")
        return "done"

    @server.prompt()
    async def guided(ctx: trimcp.ToolContext) -> str:
        """A prompt that asks for context first."""
        _, content = await ctx.elicit("Context?", name_schema, key="ctx")
        return f"About {(content or {}).get('name')}"

    @server.resource("demo://static", name="Static", mime_type="text/plain")
    async def static() -> str:
        return "static text"

    return server


class RawPeer:
    """A hand-driven client over a memory pair: raw wire messages in and out."""

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[Message],
        receive_channel: trio.MemoryReceiveChannel[Message],
    ) -> None:
        self.send_channel = send_channel
        self.receive_channel = receive_channel
        #: Notifications received while waiting for answers, in order.
        self.notes: list[Notification] = []

    async def send(self, message: Message) -> None:
        await self.send_channel.send(message)

    async def receive(self) -> Message:
        with trio.fail_after(30):
            return await self.receive_channel.receive()

    async def answer(self, id: Any) -> Response | ErrorResponse:
        """The answer to request ``id`` (notifications before it are kept)."""
        while True:
            message = await self.receive()
            if isinstance(message, Notification):
                self.notes.append(message)
                continue
            assert isinstance(message, Response | ErrorResponse), message
            assert message.id == id, message
            return message

    async def call(self, id: Any, method: str, params: Any = None) -> Response | ErrorResponse:
        await self.send(Request(id=id, method=method, params=params))
        return await self.answer(id)


@asynccontextmanager
async def served(server: trimcp.Server) -> AsyncIterator[tuple[RawPeer, StatelessCheck]]:
    """Serve ``server`` to a raw peer over memory (no handshake); checks installed."""
    checker = StatelessCheck().install(server.middlewares)
    to_session, session_in = trio.open_memory_channel[Message](64)
    session_out, from_session = trio.open_memory_channel[Message](64)
    peer = RawPeer(to_session, from_session)
    async with trio.open_nursery() as nursery:
        session = await nursery.start(server.serve_channel, MemoryChannel(session_out, session_in))
        try:
            yield peer, checker
        finally:
            await to_session.aclose()
    assert session.is_closed
    assert session.in_flight == 0


def result_of(reply: Response | ErrorResponse) -> dict[str, Any]:
    assert isinstance(reply, Response), reply
    assert isinstance(reply.result, dict)
    return reply.result


def error_of(reply: Response | ErrorResponse) -> tuple[int, Any]:
    assert isinstance(reply, ErrorResponse), reply
    return reply.error.code, reply.error.data

"""Validate what trimcp sends against the JSON schema of the negotiated revision.

The one schema helper of the test suite (the prompts, resources and property tests use
it too). :class:`SchemaCheck` installs itself as a middleware pair on a side: on the
server it learns the method of every inbound request from ``server_recv`` (so a
response can be checked against the matching ``*Result`` definition) and records every
outbound message from ``server_send``; :meth:`SchemaCheck.install_client` does the same
on a client's ``client_recv`` / ``client_send``. Each recorded message is checked
against ``JSONRPCMessage`` and, where the method is known, against its specific
definition. :meth:`SchemaCheck.validate` returns how often each definition was checked,
so a test can assert that the kinds it cares about were seen.

The schemas allow members they do not name, so ``validate(version, strict=True)`` also
checks that the objects a revision describes (content blocks, tools, resources,
prompts, ``serverInfo``, capabilities) carry no member that revision lacks.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any, Self

import jsonschema

from trimcp.dispatch import CallNext, Middlewares
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"
HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

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
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
}
#: Definition of each request or notification (checked as a whole message).
MESSAGE_DEFS = {
    "initialize": "InitializeRequest",
    "notifications/initialized": "InitializedNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/roots/list_changed": "RootsListChangedNotification",
    "sampling/createMessage": "CreateMessageRequest",
    "elicitation/create": "ElicitRequest",
    "roots/list": "ListRootsRequest",
    "ping": "PingRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "prompts/list": "ListPromptsRequest",
    "prompts/get": "GetPromptRequest",
    "completion/complete": "CompleteRequest",
    "logging/setLevel": "SetLevelRequest",
    "resources/list": "ListResourcesRequest",
    "resources/templates/list": "ListResourceTemplatesRequest",
    "resources/read": "ReadResourceRequest",
    "resources/subscribe": "SubscribeRequest",
    "resources/unsubscribe": "UnsubscribeRequest",
}
_BLOCK_DEFS = {
    "text": "TextContent",
    "image": "ImageContent",
    "audio": "AudioContent",
    "resource_link": "ResourceLink",
    "resource": "EmbeddedResource",
}


@functools.cache
def _root(version: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / version / "schema.json").read_text())  # type: ignore[no-any-return]


def _definitions(version: str) -> dict[str, Any]:
    root = _root(version)
    return root["$defs"] if "$defs" in root else root["definitions"]  # type: ignore[no-any-return]


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


def check_members(version: str, definition: str, value: Any) -> None:
    """Raise ``AssertionError`` if ``value`` has a member ``definition`` does not name."""
    defs = _definitions(version)
    assert definition in defs, f"{version} has no {definition} (sent {value!r})"
    if not isinstance(value, dict):
        return
    known = set(defs[definition].get("properties", {}))
    extra = set(value) - known
    assert not extra, f"{version} {definition} has no member(s) {sorted(extra)}: {value!r}"


def check_block(version: str, block: Any) -> None:
    """A content block: its type exists in ``version`` and it has no unknown member."""
    if not isinstance(block, dict):
        return
    definition = _BLOCK_DEFS.get(block.get("type", ""))
    assert definition is not None, (version, block)
    check_members(version, definition, block)
    if definition == "EmbeddedResource":
        resource = block.get("resource", {})
        kind = "TextResourceContents" if "text" in resource else "BlobResourceContents"
        check_members(version, kind, resource)
    if "annotations" in block and "Annotations" in _definitions(version):
        check_members(version, "Annotations", block["annotations"])


def _each(items: Any, version: str, definition: str) -> None:
    for item in items or ():
        check_members(version, definition, item)
        annotated = isinstance(item, dict) and "annotations" in item
        if annotated and definition != "Tool" and "Annotations" in _definitions(version):
            check_members(version, "Annotations", item["annotations"])


def _contents(version: str, items: Any) -> None:
    for item in items or ():
        kind = "TextResourceContents" if "text" in item else "BlobResourceContents"
        check_members(version, kind, item)


def _tools(version: str, tools: Any) -> None:
    _each(tools, version, "Tool")
    for tool in tools or ():
        if "annotations" in tool:
            check_members(version, "ToolAnnotations", tool["annotations"])


def _prompts(version: str, prompts: Any) -> None:
    _each(prompts, version, "Prompt")
    for prompt in prompts or ():
        _each(prompt.get("arguments"), version, "PromptArgument")


#: Per method: (member of the result, how to check it).
_MEMBER_CHECKS: dict[str, tuple[str, Any]] = {
    "tools/list": ("tools", _tools),
    "tools/call": ("content", lambda v, blocks: [check_block(v, b) for b in blocks or ()]),
    "prompts/get": (
        "messages",
        lambda v, messages: [check_block(v, m.get("content")) for m in messages or ()],
    ),
    "prompts/list": ("prompts", _prompts),
    "resources/list": ("resources", lambda v, items: _each(items, v, "Resource")),
    "resources/templates/list": (
        "resourceTemplates",
        lambda v, items: _each(items, v, "ResourceTemplate"),
    ),
    "resources/read": ("contents", _contents),
}


def check_result_members(version: str, method: str, result: dict[str, Any]) -> None:
    """The strict member checks of one result (see the module doc)."""
    if method == "initialize":
        check_members(version, "Implementation", result.get("serverInfo"))
        check_members(version, "ServerCapabilities", result.get("capabilities"))
    elif method in _MEMBER_CHECKS:
        member, checker = _MEMBER_CHECKS[method]
        checker(version, result.get(member))


def _primitive_members(version: str) -> set[str]:
    defs = _definitions(version)
    found: set[str] = set()
    for ref in defs["PrimitiveSchemaDefinition"]["anyOf"]:
        name = ref["$ref"].rsplit("/", 1)[1]
        options = defs[name].get("anyOf", [{"$ref": f"#/{name}"}])
        for option in options:
            found |= set(defs[option["$ref"].rsplit("/", 1)[1]].get("properties", {}))
    return found


def check_request_members(version: str, method: str, params: Any) -> None:
    """The strict member checks of a server's request: sampling messages' content
    blocks and a form's field schemas."""
    if not isinstance(params, dict):
        return
    if method == "sampling/createMessage":
        for message in params.get("messages", ()):
            if isinstance(message.get("content"), dict):
                check_block(version, message["content"])
    elif method == "elicitation/create" and "requestedSchema" in params:
        defs = _definitions(version)
        allowed = _primitive_members(version)
        for name, field in params["requestedSchema"].get("properties", {}).items():
            if "anyOf" not in defs["EnumSchema"]:  # 2025-06-18: one definition per type
                kind = field.get("type")
                definition = {"number": "NumberSchema", "integer": "NumberSchema"}.get(kind, "")
                if kind == "string":
                    definition = "EnumSchema" if "enum" in field else "StringSchema"
                elif kind == "boolean":
                    definition = "BooleanSchema"
                allowed = set(defs[definition]["properties"]) if definition else set()
            extra = set(field) - allowed
            assert not extra, f"{version} form field {name!r} has member(s) {sorted(extra)}"


class MessageRecorder:
    """Records what one side sends, each answer with the method of its request."""

    def __init__(self) -> None:
        self.sent: list[tuple[Message, str | None]] = []
        self._inbound: dict[Any, str] = {}

    def install(self, middlewares: Middlewares) -> Self:
        """Record what a server sends."""
        middlewares.server_recv.add(self._on_recv)
        middlewares.server_send.add(self._on_send)
        return self

    def install_client(self, middlewares: Middlewares) -> Self:
        """Record what a client sends."""
        middlewares.client_recv.add(self._on_recv)
        middlewares.client_send.add(self._on_send)
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


class SchemaCheck(MessageRecorder):
    """Records a side's outbound messages for validation; see the module doc.

    ``SchemaCheck(server)`` installs itself on ``server``'s middlewares at once.
    """

    def __init__(self, server: Any = None) -> None:
        super().__init__()
        if server is not None:
            self.install(server.middlewares)

    def validate(self, version: str, *, strict: bool = False) -> Counter[str]:
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
                if strict:
                    check_result_members(version, method, value["result"])
            elif isinstance(message, ErrorResponse):
                definition = "JSONRPCError" if version < "2025-11-25" else "JSONRPCErrorResponse"
                check(version, definition, value)
            elif isinstance(message, Request | Notification) and message.method in MESSAGE_DEFS:
                definition = MESSAGE_DEFS[message.method]
                check(version, definition, value)
                if strict:
                    check_request_members(version, message.method, message.params)
            if definition is not None:
                seen[definition] += 1
        return seen

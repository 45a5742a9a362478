"""Span names and attributes, as the OpenTelemetry semantic conventions for MCP name them.

The conventions (``gen-ai/mcp``, status: development) give each request a span named
``{mcp.method.name} {target}``, where the target is the tool or prompt name when there
is one (resource URIs are attributes only: they are not low-cardinality), and define
the attribute names below. Attributes under ``trimcp.`` are this library's own: the
era, the outcome, and an id for sessions whose transport has none.
"""

from __future__ import annotations

from typing import Any, Final

from trimcp.nursery import Session
from trimcp.transports import TransportKind, transport_kind

__all__ = [
    "ERA",
    "ERROR_TYPE",
    "METHOD",
    "OUTCOME",
    "describe_request",
    "transport_attributes",
]

METHOD: Final = "mcp.method.name"
REQUEST_ID: Final = "jsonrpc.request.id"
SESSION_ID: Final = "mcp.session.id"
PROTOCOL_VERSION: Final = "mcp.protocol.version"
TOOL_NAME: Final = "gen_ai.tool.name"
PROMPT_NAME: Final = "gen_ai.prompt.name"
OPERATION: Final = "gen_ai.operation.name"
RESOURCE_URI: Final = "mcp.resource.uri"
ERROR_TYPE: Final = "error.type"
STATUS_CODE: Final = "rpc.response.status_code"
NETWORK_TRANSPORT: Final = "network.transport"
NETWORK_PROTOCOL: Final = "network.protocol.name"
#: ``handshake`` or ``stateless``: which era of the protocol the request was served in.
ERA: Final = "trimcp.era"
#: ``ok``, ``error``, ``tool_error``, ``timeout``, ``cancelled`` or ``connection_closed``.
OUTCOME: Final = "trimcp.outcome"
#: Why a cancelled request was cancelled: ``peer``, ``caller`` or ``session_ended``.
CANCEL_REASON: Final = "trimcp.cancel.reason"
#: An id this process gives each session (transports like stdio have none of their own).
LOCAL_SESSION: Final = "trimcp.session"

_URI_METHODS: Final = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


def describe_request(method: str, params: Any) -> tuple[str, dict[str, Any]]:
    """The span name and the request's own attributes (method, target, resource)."""
    attributes: dict[str, Any] = {METHOD: method}
    name = method
    if isinstance(params, dict):
        target = params.get("name")
        if method == "tools/call" and isinstance(target, str):
            attributes[TOOL_NAME] = target
            attributes[OPERATION] = "execute_tool"
            name = f"{method} {target}"
        elif method == "prompts/get" and isinstance(target, str):
            attributes[PROMPT_NAME] = target
            name = f"{method} {target}"
        elif method in _URI_METHODS and isinstance(params.get("uri"), str):
            attributes[RESOURCE_URI] = params["uri"]
    return name, attributes


_NETWORK: Final[dict[TransportKind | None, dict[str, Any]]] = {
    "websocket": {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL: "websocket"},
    "streamable-http": {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL: "http"},
    "http+sse": {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL: "http"},
    "stdio": {NETWORK_TRANSPORT: "pipe"},
}


def transport_attributes(session: Session) -> dict[str, Any]:
    """``network.*`` and ``mcp.session.id`` for the transport ``session`` runs over."""
    channel = session.channel
    attributes = dict(_NETWORK.get(transport_kind(channel), {}))
    session_id = getattr(channel, "session_id", None)
    if isinstance(session_id, str):
        attributes[SESSION_ID] = session_id
    return attributes

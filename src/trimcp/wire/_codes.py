"""JSON-RPC 2.0 and MCP error codes.

Plain ``int`` constants rather than an ``IntEnum``: error codes travel through JSON, are compared
with codes a peer sent (which may be codes we do not know), and an enum would have to be unwrapped
at every boundary. The names follow the JSON-RPC 2.0 specification and the MCP schema.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CONNECTION_CLOSED",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
]

# JSON-RPC 2.0 (section 5.1).
PARSE_ERROR: Final = -32700
"""Invalid JSON was received (including non-UTF-8 bytes and over-deep nesting)."""
INVALID_REQUEST: Final = -32600
"""The JSON is not a valid request object (wrong shape, duplicate keys, batch, too large)."""
METHOD_NOT_FOUND: Final = -32601
"""The method does not exist or is not available."""
INVALID_PARAMS: Final = -32602
"""Invalid method parameters."""
INTERNAL_ERROR: Final = -32603
"""Internal error; the message sent to the peer stays generic."""

# Implementation-defined server errors (-32000 to -32099) used by MCP and trimcp.
CONNECTION_CLOSED: Final = -32000
"""The connection closed before a response arrived."""
REQUEST_TIMEOUT: Final = -32001
"""A sent request timed out."""
RESOURCE_NOT_FOUND: Final = -32002
"""``resources/read`` for a URI the server does not know."""
HEADER_MISMATCH: Final = -32020
"""2026-07-28: an ``Mcp-Method``/``Mcp-Name`` header disagrees with the body."""
MISSING_CLIENT_CAPABILITY: Final = -32021
"""The request needs a client capability that was not declared."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""The requested protocol version is not supported."""
URL_ELICITATION_REQUIRED: Final = -32042
"""The server needs a URL-mode elicitation before it can continue."""

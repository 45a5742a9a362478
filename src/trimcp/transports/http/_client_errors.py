"""What the HTTP client makes of refusals: errors for callers, and header checks."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

import h11

from trimcp.wire import (
    INTERNAL_ERROR,
    NO_DATA,
    ErrorObject,
    ErrorResponse,
    RemoteProtocolError,
    decode,
)

__all__ = ["http_error", "phrase", "session_id_in", "valid_session_id"]

logger = logging.getLogger("trimcp.http.client")

_MAX_SESSION_ID = 1024


def valid_session_id(value: str) -> bool:
    return 0 < len(value) <= _MAX_SESSION_ID and all(0x21 <= ord(c) <= 0x7E for c in value)


def session_id_in(response: h11.Response) -> str | None:
    """The ``Mcp-Session-Id`` a response gives, if it is a valid one (an invalid one is
    logged and ignored)."""
    for name, value in response.headers:
        if name == b"mcp-session-id":
            text = value.decode("latin-1")
            if valid_session_id(text):
                return text
            logger.warning("ignoring an invalid Mcp-Session-Id from the server")
            return None
    return None


def http_error(status: int, reason: str, body: bytes) -> ErrorObject:
    """The error a caller gets for an HTTP error status (see the module doc)."""
    data: Any = {"httpStatus": status}
    try:
        decoded = decode(body)
    except RemoteProtocolError:
        decoded = None
    if isinstance(decoded, ErrorResponse):
        error = decoded.error
        return ErrorObject(
            code=error.code,
            message=f"HTTP {status}: {error.message}",
            data=error.data if error.data is not NO_DATA else data,
        )
    text = body[:200].decode("utf-8", "replace").strip()
    text = "".join(c for c in text if c.isprintable())
    message = f"HTTP {status} {reason}".rstrip() + (f": {text}" if text else "")
    return ErrorObject(code=INTERNAL_ERROR, message=message, data=data)


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""

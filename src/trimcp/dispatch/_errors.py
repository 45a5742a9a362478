"""The exceptions a caller of trimcp sees for a request that did not succeed.

``McpError`` is the one exception type that carries a JSON-RPC error object across the
API in both directions:

* a handler raises it to answer a request with that exact error (code, message, data);
* a caller receives it when the peer answered its request with an error.

Its subclasses name the failures that come from the engine rather than the peer, so that
callers can catch them by type: the peer went away (:class:`ConnectionClosedError`), the
request ran out of time (:class:`RequestTimeoutError`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trimcp.wire import (
    CONNECTION_CLOSED,
    NO_DATA,
    REQUEST_TIMEOUT,
    ErrorObject,
)

__all__ = [
    "LOCAL_CONNECTION_CLOSED",
    "ConnectionClosedError",
    "ContextClosedError",
    "McpError",
    "RequestTimeoutError",
    "connection_closed_error",
    "register_error_type",
]


class _LocalConnectionClosed:
    def __repr__(self) -> str:
        return "LOCAL_CONNECTION_CLOSED"


#: ``data`` of an error answer that a *transport* made up locally to fail a call because
#: the connection is gone. Only such answers become :class:`ConnectionClosedError`; a
#: peer's own ``-32000`` (the generic server-error code) stays an :class:`McpError`.
LOCAL_CONNECTION_CLOSED: Any = _LocalConnectionClosed()


def connection_closed_error(message: str) -> ErrorObject:
    """The error object a transport delivers to fail a call whose connection is gone."""
    return ErrorObject(code=CONNECTION_CLOSED, message=message, data=LOCAL_CONNECTION_CLOSED)


#: Error codes with a typed subclass of :class:`McpError`: code -> decoder of the error
#: object (the decoder returns ``None`` when ``data`` does not have the expected shape, and
#: the answer is then raised as a plain :class:`McpError`). Filled by the modules that
#: define the subclasses, through :func:`register_error_type`.
_TYPED_CODES: dict[int, Callable[[ErrorObject], McpError | None]] = {}


def register_error_type(code: int, decode: Callable[[ErrorObject], McpError | None]) -> None:
    """Raise peer answers with ``code`` as the exception ``decode`` builds from them."""
    _TYPED_CODES[code] = decode


class McpError(Exception):
    """A JSON-RPC error: raised by handlers to send one, raised to callers that got one.

    Args:
      code: the JSON-RPC error code (see :mod:`trimcp.wire` for the named ones).
      message: a short human-readable message. It goes on the wire as it is, so it must
        not contain secrets or tracebacks.
      data: optional structured detail; :data:`trimcp.wire.NO_DATA` means "no data member".
    """

    def __init__(self, code: int, message: str, data: Any = NO_DATA) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_error(cls, error: ErrorObject) -> McpError:
        """Build the exception for an error object received from the peer."""
        if error.code == CONNECTION_CLOSED and error.data is LOCAL_CONNECTION_CLOSED:
            return ConnectionClosedError(error.message)
        decode = _TYPED_CODES.get(error.code)
        if decode is not None:
            typed = decode(error)
            if typed is not None:
                return typed
        return cls(error.code, error.message, error.data)

    def to_error(self) -> ErrorObject:
        """The error object to put on the wire for this exception."""
        return ErrorObject(code=self.code, message=self.message, data=self.data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class ConnectionClosedError(McpError):
    """The peer went away (EOF, broken pipe, dead child process, closed session).

    Every request still waiting for an answer fails with this at once when the
    connection ends; nobody waits forever.
    """

    def __init__(self, message: str = "Connection closed") -> None:
        super().__init__(CONNECTION_CLOSED, message)


class RequestTimeoutError(McpError):
    """An outbound request got no answer in time; ``notifications/cancelled`` was sent."""

    def __init__(self, message: str = "Request timed out") -> None:
        super().__init__(REQUEST_TIMEOUT, message)


class ContextClosedError(RuntimeError):
    """A handler context was used after its request ended.

    A context lives exactly as long as its request. Work that must go on after the
    response belongs in :func:`trimcp.detach_for_background`, which hands it a
    session-bound context instead.
    """

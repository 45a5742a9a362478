"""What the HTTP client transports ask of an authorization layer (the client side).

The transports never obtain a token themselves. A client that reaches a protected server
passes an :class:`HttpAuth` (``streamable_http(url, auth=...)``, implemented by
:mod:`trimcp.auth`); for the life of the connection the transport holds the
:class:`HttpAuthSession` that ``attach`` yields, and talks to it at three points only:

* before every HTTP request: :meth:`HttpAuthSession.headers` gives the credentials to
  send (``Authorization``, ``DPoP``), or none yet;
* when a request is answered ``401`` or ``403``: :meth:`HttpAuthSession.challenged` is
  told the refusal (status and headers, the body already read) and obtains whatever the
  server asked for (a first token, a refreshed one, more scopes, a DPoP nonce). ``True``:
  send the request again with fresh headers. ``False``: not an authorization matter,
  the request fails as any HTTP error does. :class:`AuthorizationError`: authorization
  was needed and could not be had; the request fails with that reason.
* every other answer: :meth:`HttpAuthSession.observe` (a success resets retry counts, a
  ``DPoP-Nonce`` header is remembered).

A request is re-sent at most ``max_auth_retries`` times (transport setting), whatever the
layer answers, so a server that refuses forever cannot make a call loop. The work a
challenge starts runs in the session's own tasks, not in the request's: a request that
gives up meanwhile does not abort an authorization others wait for.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Final, Protocol, final

import attrs

from trimcp.wire import INTERNAL_ERROR, ErrorObject

from ._client_hooks import HttpRequestInfo

__all__ = [
    "AUTH_HEADERS",
    "AuthResponse",
    "AuthorizationError",
    "HttpAuth",
    "HttpAuthSession",
    "authorization_error",
]

#: Header names that belong to the authorization layer when one is configured.
AUTH_HEADERS: Final = frozenset({"authorization", "dpop"})


class AuthorizationError(Exception):
    """Authorization was needed and could not be had (the message says why; it never
    holds a token or a client secret)."""


@final
@attrs.frozen
class AuthResponse:
    """The head of an HTTP answer, as the authorization layer sees it."""

    status: int
    headers: tuple[tuple[str, str], ...]
    """Header names lower-cased, values as received (latin-1)."""

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (lower-case), or ``None``."""
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def all(self, name: str) -> list[str]:
        """Every value of header ``name`` (lower-case)."""
        return [value for key, value in self.headers if key == name]


class HttpAuthSession(Protocol):
    """One connection's view of an authorization layer (see the module doc)."""

    async def headers(self, request: HttpRequestInfo) -> Sequence[tuple[str, str]]:
        """The credentials to send with ``request`` (may be empty)."""
        ...

    async def challenged(
        self,
        request: HttpRequestInfo,
        sent: Sequence[tuple[str, str]],
        response: AuthResponse,
    ) -> bool:
        """``request``, sent with credentials ``sent``, was refused with ``response``
        (401 or 403). True: send it again. Raises :class:`AuthorizationError`."""
        ...

    def observe(self, request: HttpRequestInfo, response: AuthResponse) -> None:
        """Any other answer to a request (for nonces and retry bookkeeping)."""
        ...

    async def settled(self) -> bool:
        """Wait while authorization work runs; True if any ever ran on this session."""
        ...


class HttpAuth(Protocol):
    """An authorization layer for HTTP client transports (see the module doc)."""

    def attach(self, url: str) -> AbstractAsyncContextManager[HttpAuthSession]:
        """The session for a connection to the MCP endpoint ``url``, for its lifetime."""
        ...


def authorization_error(status: int, reason: str) -> ErrorObject:
    """The error of a request refused because authorization could not be had."""
    return ErrorObject(
        code=INTERNAL_ERROR,
        message=f"HTTP {status}: authorization failed: {reason}",
        data={"httpStatus": status, "authorization": reason},
    )


def response_of(status: int, raw: Sequence[tuple[bytes, bytes]]) -> AuthResponse:
    """An :class:`AuthResponse` from h11's header list."""
    return AuthResponse(
        status,
        tuple((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in raw),
    )

"""What the HTTP and WebSocket transports ask of an authorization layer.

A server with authorization is an OAuth 2.1 *resource server*. The transports never
parse a token: they hand each request of a protected path to an :class:`Authenticator`
(implemented by :mod:`trimcp.auth`) through the three calls of this module, all at one
place in the app (:mod:`._asgi`), the HTTP+SSE endpoints and the WebSocket handshakes:

* :func:`metadata_document`: a ``GET`` of a well-known path the authenticator serves
  (protected resource metadata, RFC 9728) is answered with its document, unauthenticated;
* :func:`authenticate`: the request's credentials become a :class:`AuthenticatedCaller`,
  or the request is refused with the authenticator's status and challenge headers
  (401 with ``WWW-Authenticate``, 403, or 503 when the keys to check tokens with cannot
  be had);
* :func:`authorize`: once a POST's messages are decoded, each request is judged against
  the caller's grants (403 ``insufficient_scope``), before anything is delivered.

The caller then travels with the request: the session's channel records it per request
(:func:`caller_of` reads it back for the handler context), and every piece of per-caller
state (a session id, a stream to resume) remembers its owner's ``identity``; presented by
another caller, it is unknown (404).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, Protocol, final

import attrs

from trimcp.nursery import Caller
from trimcp.wire import Message, Request, RequestId

from ._guards import SERVER_ERROR, Headers, HttpError

__all__ = [
    "AuthRefusal",
    "AuthRequest",
    "AuthenticatedCaller",
    "Authenticator",
    "authenticate",
    "authorize",
    "caller_of",
    "metadata_document",
    "owner_matches",
]

#: The JSON-RPC code of an authorization refusal's body (the HTTP status says the rest).
AUTH_ERROR: Final = SERVER_ERROR


class AuthenticatedCaller(Caller, Protocol):
    """A caller as the transports see it: who, and until when its credentials hold."""

    @property
    def expires_at(self) -> float | None:
        """Unix seconds after which the credentials are no longer valid (``None``: no end)."""
        ...


@final
@attrs.frozen
class AuthRequest:
    """The parts of an HTTP request (or WebSocket handshake) authorization looks at.

    ``scheme`` is ``http`` or ``https`` (a WebSocket's ``ws``/``wss`` map to these),
    ``host`` the ``Host`` header, ``server`` the local address the request arrived on,
    ``query`` the raw query string, ``resource_path`` the path of the MCP endpoint the
    request belongs to (the protected resource; the legacy HTTP+SSE paths belong to it
    too).
    """

    method: str
    scheme: str
    host: str | None
    path: str
    query: bytes
    server: tuple[str, int] | None
    headers: Headers
    resource_path: str

    @classmethod
    def from_scope(
        cls, scope: Any, headers: Headers, resource_path: str, method: str | None = None
    ) -> AuthRequest:
        """The request of an ASGI ``http`` or ``websocket`` scope."""
        scheme = str(scope.get("scheme") or "http")
        server = scope.get("server")
        return cls(
            method=method or str(scope.get("method") or "GET"),
            scheme={"ws": "http", "wss": "https"}.get(scheme, scheme),
            host=headers.get("host"),
            path=str(scope.get("path") or "/"),
            query=bytes(scope.get("query_string") or b""),
            server=(str(server[0]), int(server[1])) if server else None,
            headers=headers,
            resource_path=resource_path,
        )


class AuthRefusal(Exception):
    """The authenticator's refusal: an HTTP status, a message for the body (never a
    token), the headers that go with it (``WWW-Authenticate``, ``DPoP-Nonce``,
    ``Retry-After``) and the OAuth error code, if any."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: Sequence[tuple[bytes, bytes]] = (),
        *,
        error: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = list(headers)
        self.error = error

    def http_error(self, request_id: RequestId | None = None) -> HttpError:
        data = {"error": self.error} if self.error is not None else None
        return HttpError(
            self.status,
            self.message,
            code=AUTH_ERROR,
            headers=self.headers,
            id=request_id,
            data=data,
        )


class Authenticator(Protocol):
    """What a transport needs of an authorization layer (see the module doc)."""

    def metadata(self, request: AuthRequest) -> bytes | None:
        """The JSON document served at ``request.path`` without authentication, or
        ``None`` when that path is not one of the authenticator's."""
        ...

    async def authenticate(self, request: AuthRequest) -> AuthenticatedCaller:
        """The verified caller of ``request``; raises :class:`AuthRefusal`."""
        ...

    def authorize(
        self, caller: AuthenticatedCaller, request: AuthRequest, message: Request
    ) -> None:
        """Whether ``caller`` may send ``message``; raises :class:`AuthRefusal` (403)."""
        ...


def metadata_document(auth: Authenticator | None, request: AuthRequest) -> bytes | None:
    """The document to answer ``request`` with, when it asks for one (``GET`` only)."""
    if auth is None or request.method not in ("GET", "HEAD"):
        return None
    return auth.metadata(request)


async def authenticate(
    auth: Authenticator | None, request: AuthRequest
) -> AuthenticatedCaller | None:
    """The caller of ``request`` (``None`` without authorization); raises
    :class:`HttpError` with the authenticator's status and challenge."""
    if auth is None:
        return None
    try:
        return await auth.authenticate(request)
    except AuthRefusal as refusal:
        raise refusal.http_error() from None


def authorize(
    auth: Authenticator | None,
    caller: AuthenticatedCaller | None,
    request: AuthRequest | None,
    messages: Iterable[Message],
) -> None:
    """Refuse (:class:`HttpError`, 403) a POST carrying a request ``caller`` may not send."""
    if auth is None or caller is None or request is None:
        return
    for message in messages:
        if isinstance(message, Request):
            try:
                auth.authorize(caller, request, message)
            except AuthRefusal as refusal:
                raise refusal.http_error(message.id) from None


def owner_matches(owner: str | None, caller: Caller | None) -> bool:
    """Whether state owned by ``owner`` may be used by ``caller``: state made without
    authorization has no owner; state made by a caller belongs to that caller alone."""
    if owner is None:
        return True
    return caller is not None and caller.identity == owner


def caller_of(channel: object, request_id: RequestId) -> Caller | None:
    """The caller a channel received request ``request_id`` from (``None`` for a channel
    that authenticates nobody)."""
    lookup = getattr(channel, "caller_for", None)
    if lookup is None:
        return None
    caller = lookup(request_id)
    return caller if caller is not None and hasattr(caller, "identity") else None

"""The 2024-11-05 HTTP+SSE transport, served beside Streamable HTTP for old clients.

Two endpoints (paths configurable, defaults ``/sse`` and ``/messages``):

* ``GET /sse`` opens a session and its one SSE stream. The first event is
  ``event: endpoint`` whose data is the relative URI to post to,
  ``/messages?session_id=<id>`` (the id is 192 bits from :mod:`secrets`); every message
  the server sends in that session follows as an ``event: message``.
* ``POST /messages?session_id=<id>`` carries one JSON-RPC message (no batches) and is
  answered ``202 Accepted`` with an empty body; answers come on the stream. Refusals are
  JSON-RPC error bodies: 400 for a missing or malformed id or body, 404 for an unknown
  or ended session, 415 for a Content-Type that is not JSON, 413 past the body limit,
  503 when the session stays too busy to take the message.

The session lives exactly as long as its stream: when the client goes away (or the
stream overflows, or the server ends the session) the session's tasks are cancelled and
its id is forgotten, so later POSTs get 404. Sessions run in the Streamable HTTP app's
:class:`~._sessions_manager.SessionManager` (they count towards ``max_sessions``), and
every request passes the same guards (framing, ``Host``/``Origin``) as Streamable HTTP.
With authorization, both endpoints are authenticated by the app (:mod:`._auth`): the
session belongs to the caller that opened its stream, a ``session_id`` posted to by
another caller is unknown (404), and each request is authorized before delivery (403).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import final
from urllib.parse import parse_qs

from trimcp.wire import RemoteProtocolError, decode, encode

from ._asgi_io import Receive, Scope, Send, pump, send_empty
from ._asgi_post import SESSION_NOT_FOUND, deliver_within
from ._auth import AuthenticatedCaller, Authenticator, AuthRequest, authorize, owner_matches
from ._guards import (
    SERVER_ERROR,
    SESSION_ID_PATTERN,
    Headers,
    HttpError,
    accepts,
    is_json_content_type,
)
from ._hosts import HostPolicy, check_host_and_origin
from ._legacy_sse_channel import LegacySseChannel
from ._server_limits import HttpServerLimits
from ._sessions_manager import SessionManager, new_session_id

__all__ = ["LegacySseEndpoint"]

logger = logging.getLogger("trimcp.http.server")

#: The JSON-RPC code of a 404 for an unknown session (as on Streamable HTTP).


@final
class LegacySseEndpoint:
    """The HTTP+SSE endpoints of one app; see the module doc.

    The Streamable HTTP app checks framing, then hands requests for :meth:`serves`
    paths to :meth:`handle`.
    """

    def __init__(
        self,
        manager: SessionManager,
        limits: HttpServerLimits,
        host_policy: HostPolicy,
        *,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        auth: Authenticator | None = None,
    ) -> None:
        self.manager = manager
        self.auth = auth
        self.limits = limits
        self.host_policy = host_policy
        self.sse_path = sse_path
        self.messages_path = messages_path
        self._channels: dict[str, LegacySseChannel] = {}

    def __len__(self) -> int:
        """Sessions with an open stream."""
        return len(self._channels)

    def get(self, session_id: str) -> LegacySseChannel | None:
        return self._channels.get(session_id)

    def serves(self, path: object) -> bool:
        return path in (self.sse_path, self.messages_path)

    async def handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        request: AuthRequest | None = None,
        caller: AuthenticatedCaller | None = None,
    ) -> None:
        """Serve one request of either endpoint; ``caller`` is who the app authenticated
        (``None`` without authorization)."""
        check_host_and_origin(self.host_policy, scope, headers)
        path, method = scope.get("path"), scope.get("method")
        if method == "GET" and path == self.sse_path:
            await self._stream(scope, receive, send, headers, caller)
        elif method == "POST" and path == self.messages_path:
            await self._message(scope, receive, send, headers, request, caller)
        else:
            routes = (("GET", self.sse_path), ("POST", self.messages_path))
            allow = [verb for verb, route in routes if route == path]
            raise HttpError(
                405,
                "Method Not Allowed",
                code=SERVER_ERROR,
                headers=[(b"allow", ", ".join(allow).encode())],
            )

    # ------------------------------------------------------------------ GET: the stream
    async def _stream(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        caller: AuthenticatedCaller | None,
    ) -> None:
        # Old clients differ in what they send; only an Accept that excludes SSE is refused.
        if headers.get_all("accept") and not accepts(headers, "text/event-stream"):
            raise HttpError(406, "Not Acceptable: Accept must include text/event-stream")
        session_id = new_session_id()
        root = str(scope.get("root_path") or "").rstrip("/")
        endpoint = f"{root}{self.messages_path}?session_id={session_id}"
        channel = LegacySseChannel(session_id, self.limits, endpoint, self.manager.session_output())
        channel.bind(caller)
        try:
            self.manager.adopt(channel, client=self.manager.client_key(scope, caller))
        except HttpError:
            channel.outbox.abort()
            raise
        self._channels[session_id] = channel
        logger.debug("SSE session %s opened", session_id)
        try:
            await pump(channel.outbox, receive, send, (), timeout=self.limits.send_timeout)
        finally:
            self._channels.pop(session_id, None)
            self.manager.terminate(channel)
            channel.outbox.abort()
            logger.debug("SSE session %s ended", session_id)

    # ------------------------------------------------------------------ POST: one message
    async def _message(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        request: AuthRequest | None,
        caller: AuthenticatedCaller | None,
    ) -> None:
        if not is_json_content_type(headers):
            raise HttpError(415, "Unsupported Media Type: Content-Type must be application/json")
        declared = headers.get("content-length")
        if declared is not None and int(declared) > self.limits.max_body_size:
            raise HttpError(413, "Payload Too Large", close=True)
        channel = self._channels.get(_session_id(scope))
        if channel is None or channel.closed or not owner_matches(channel.owner, caller):
            raise HttpError(404, "Not Found: unknown or ended session", code=SESSION_NOT_FOUND)
        body = await self.manager.read_body(scope, receive, caller)
        try:
            message = decode(body)
        except RemoteProtocolError as exc:
            hint = exc.error_hint
            if hint is not None:
                raise HttpError(400, exc.args[0], body=encode(hint)) from None
            raise HttpError(400, f"Bad Request: {exc}") from None
        if isinstance(message, list):  # decode refuses batches; this keeps mypy informed
            raise HttpError(400, "Invalid Request: batches are not supported")
        authorize(self.auth, caller, request, [message])
        channel.bind(caller)
        await deliver_within(channel, message, self.limits.inbound_wait)
        await send_empty(send, 202)


def _session_id(scope: Scope) -> str:
    """The one well-formed ``session_id`` of the query string (400 otherwise)."""
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    values: Sequence[str] = parse_qs(query, keep_blank_values=True).get("session_id", [])
    if not values:
        raise HttpError(400, "Bad Request: the session_id query parameter is required")
    if len(values) > 1:
        raise HttpError(400, "Bad Request: more than one session_id")
    if SESSION_ID_PATTERN.fullmatch(values[0]) is None:
        raise HttpError(400, "Bad Request: malformed session_id")
    return values[0]

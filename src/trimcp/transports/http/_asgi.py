"""The Streamable HTTP server as an ASGI 3 application (hypercorn's Trio worker, or any
Trio-based ASGI server).

One endpoint (``path``, default ``/mcp``): ``POST`` carries one JSON-RPC message (a
batch only in 2025-03-26 sessions), ``GET`` opens the standalone SSE stream or resumes
one (``Last-Event-ID``), ``DELETE`` ends the session. With ``legacy_sse`` (the
default) the 2024-11-05 HTTP+SSE endpoints are served too (:mod:`._legacy_sse`). The
guards of :mod:`._guards` run before any body is read; every refusal is a JSON-RPC
error body with the right HTTP status. What happens to messages once they are in a
session is :mod:`._sessions`'s business, and the lifetime of sessions
:mod:`._sessions_manager`'s.

The app needs its session manager running: ASGI lifespan starts it, or the embedding
code runs :meth:`StreamableHttpApp.run` in a nursery of its own (``serve_http`` does).

Both eras on one endpoint: a POST naming a stateless-era (2026-07-28) version, or
carrying that era's ``_meta`` without a session id, is checked by :mod:`._modern_post`
and served by a session of its own that ends with the response (closing the stream
cancels it); GET and DELETE of that era are 405. :mod:`._asgi_post` answers POSTs;
:mod:`._asgi_get` finds a request's session and serves GET and DELETE.

With an ``auth`` (:class:`~._auth.Authenticator`), :meth:`StreamableHttpApp._authenticate`
is the one place requests meet it: well-known metadata is answered there, and a request
for a protected path is authenticated (after the framing and ``Host``/``Origin`` checks,
before any body is read) and routed with its caller; a POST's requests are authorized
once decoded, before delivery (:mod:`._auth`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Final, final

import trio

from trimcp.nursery import Caller
from trimcp.protocol import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    STATELESS_VERSIONS,
    Feature,
    supports,
)
from trimcp.wire import (
    Message,
    Notification,
    RemoteProtocolError,
    Request,
    decode,
    encode,
)

from ..websocket._asgi import serve_asgi_websocket
from ..websocket._limits import WebSocketLimits
from ._asgi_get import SessionRoutes
from ._asgi_io import (
    BODY_BUFFERED,
    ClientGone,
    Receive,
    Scope,
    Send,
    send_empty,
    send_error,
    send_json,
)
from ._asgi_post import serve_post, shutting_down
from ._auth import (
    AuthenticatedCaller,
    Authenticator,
    AuthRequest,
    authenticate,
    authorize,
    metadata_document,
)
from ._budget import EventBudget
from ._event_store import EventStore, MemoryEventStore
from ._guards import (
    SERVER_ERROR,
    Headers,
    HttpError,
    accepts,
    check_framing,
    is_json_content_type,
)
from ._hosts import HostPolicy, check_host_and_origin
from ._legacy_sse import LegacySseEndpoint
from ._modern_post import check_modern_post, is_modern_post, status_for
from ._replicas import Replicas
from ._server_limits import HttpServerLimits
from ._sessions import HttpSessionChannel
from ._sessions_manager import ServeSession, SessionManager
from ._shared import SharedSessions

__all__ = ["StreamableHttpApp"]

logger = logging.getLogger("trimcp.http.server")

_DEFAULT_STORE: Final[Any] = object()
#: The revisions whose POSTs may carry a JSON-RPC batch.
_BATCHES: Final[dict[str | None, bool]] = {
    version: supports(version, Feature.JSONRPC_BATCH) for version in ALL_VERSIONS
}


@final
class StreamableHttpApp(SessionRoutes):
    """An ASGI app serving MCP sessions over Streamable HTTP.

    Args:
      serve_session: serves one session over a channel until it ends (for example
        ``server.serve_channel``).
      path: the endpoint's path.
      limits: every bound (:class:`HttpServerLimits`).
      host_policy: the DNS-rebinding guard (:class:`HostPolicy`, on by default).
      supported_versions: protocol revisions accepted in ``MCP-Protocol-Version``.
      stateless: no session ids; each POST is served by a short session of its own
        (for load-balanced deployments). There is no GET stream then.
      event_store: a factory of one :class:`EventStore` per session, or ``None`` to
        make streams not resumable (default: a bounded :class:`MemoryEventStore`).
      standalone_get: ``False`` answers every GET with 405.
      websocket_limits: bounds of MCP over WebSocket, which the app serves on ``path``
        to ASGI ``websocket`` connections (subprotocol ``mcp``), except when stateless.
      legacy_sse: also serve the 2024-11-05 HTTP+SSE transport for old clients
        (:mod:`._legacy_sse`), at ``sse_path`` and ``messages_path``; never when
        ``stateless``.
      draining: tells whether the server is shutting down (``Server.shutdown``): then a
        POST carrying a request gets 503 with ``Retry-After`` and a ``-32000`` error.
      auth: the resource server that authenticates and authorizes requests (see
        :mod:`._auth`); ``None`` serves everyone. Sessions are budgeted per
        authenticated caller (``max_sessions_per_client``), else per client address.
      around: an async context manager factory entered around :meth:`run` (a server's
        lifespan): entered before the first session, exited after the last.
      shared: a store shared with the other processes serving these sessions
        (:mod:`._shared`; it must be running while the app is): any of them then
        serves any request of any session. ``None``: sessions live here alone.
    """

    def __init__(
        self,
        serve_session: ServeSession,
        *,
        path: str = "/mcp",
        limits: HttpServerLimits | None = None,
        host_policy: HostPolicy | None = None,
        supported_versions: tuple[str, ...] = HANDSHAKE_VERSIONS,
        stateless: bool = False,
        event_store: Callable[[], EventStore] | None = _DEFAULT_STORE,
        standalone_get: bool = True,
        legacy_sse: bool = True,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        websocket_limits: WebSocketLimits | None = None,
        background: Callable[..., Awaitable[object]] | None = None,
        draining: Callable[[], bool] | None = None,
        auth: Authenticator | None = None,
        around: Callable[[], AbstractAsyncContextManager[object]] | None = None,
        shared: SharedSessions | None = None,
    ) -> None:
        self.path = path
        self.auth = auth
        #: Entered around everything :meth:`run` runs, exited after the last session
        #: ended (a server's lifespan).
        self.around = around
        #: Whether the server behind is shutting down: a POST carrying a request is
        #: then refused with 503 (answers and notifications still pass).
        self.draining = draining
        #: HTTP exchanges being served now (a shutdown lets them finish writing).
        self.exchanges = 0
        #: Runs beside the sessions for as long as they do (a server's task nursery);
        #: started with ``task_status``.
        self.background = background
        #: Bounds of the WebSocket connections served on ``path`` (not when stateless).
        self.websocket_limits = websocket_limits or WebSocketLimits()
        self.limits = limits or HttpServerLimits()
        self.host_policy = host_policy or HostPolicy()
        self.supported_versions = supported_versions
        self.stateless = stateless
        #: Stateless-era (2026-07-28) POSTs are served when a version of that era is
        #: supported; each gets a session of its own, whatever ``stateless`` says.
        self.serves_stateless = any(v in STATELESS_VERSIONS for v in supported_versions)
        self.standalone_get = standalone_get and not stateless
        #: The bytes every session's in-memory event store holds together.
        self.event_budget = EventBudget(self.limits.replay_total_bytes)
        if event_store is _DEFAULT_STORE:
            event_store = None if stateless else self._memory_store
        self.manager = SessionManager(serve_session, self.limits, event_store)
        #: This process's replicas of shared sessions (``None``: no shared store).
        self.replicas = (
            None if shared is None or stateless else Replicas(self.manager, shared, self.limits)
        )
        self.legacy: LegacySseEndpoint | None = None
        if legacy_sse and not stateless:
            self.legacy = LegacySseEndpoint(
                self.manager,
                self.limits,
                self.host_policy,
                sse_path=sse_path,
                messages_path=messages_path,
                auth=auth,
            )

    def _memory_store(self) -> EventStore:
        return MemoryEventStore(
            max_events=self.limits.replay_events,
            max_bytes=self.limits.replay_bytes,
            max_streams=self.limits.replay_streams,
            max_session_bytes=self.limits.replay_session_bytes,
            budget=self.event_budget,
        )

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the app's sessions (and ``background``) until cancelled (instead of ASGI
        lifespan), all inside ``around`` when given."""
        around = self.around() if self.around is not None else nullcontext()
        async with around, trio.open_nursery() as nursery:
            if self.background is not None:
                await nursery.start(self.background)
            await nursery.start(self.manager.run)
            if self.replicas is not None:
                await nursery.start(self.replicas.run)
            task_status.started()

    # ------------------------------------------------------------------ ASGI entry
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            # Served here, not in a method of its own: a parked request keeps one
            # frame less.
            headers = Headers(scope.get("headers", ()))
            self.exchanges += 1
            try:
                try:
                    await self._route(scope, receive, send, headers)
                except HttpError as error:
                    await send_error(send, error)
            except ClientGone:
                logger.debug("client went away before its response")
            finally:
                self.exchanges -= 1
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            if scope.get("path") != self.path or self.stateless:
                await send({"type": "websocket.close", "code": 1008})
                return
            await serve_asgi_websocket(
                scope,
                receive,
                send,
                self.manager.serve_session,
                host_policy=self.host_policy,
                limits=self.websocket_limits,
                auth=self.auth,
            )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with trio.open_nursery() as nursery:
            if not self.manager.running:
                await nursery.start(self.run)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            nursery.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})

    def _route(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        request: AuthRequest | None = None,
        caller: AuthenticatedCaller | None = None,
    ) -> Awaitable[None]:
        """Check the request and pick its handler; its awaitable, for ``__call__`` to await
        (a plain function: a parked request keeps no frame of it). Raises ``HttpError``.
        With authorization, a request not yet seen by it goes there first.
        """
        check_framing(headers, self.limits.max_header_bytes)
        if self.auth is not None and request is None:
            return self._authenticate(scope, receive, send, headers)
        if scope.get("path") != self.path:
            if self.legacy is None or not self.legacy.serves(scope.get("path")):
                raise HttpError(404, "Not Found", code=SERVER_ERROR)
            return self.legacy.handle(scope, receive, send, headers, request, caller)
        check_host_and_origin(self.host_policy, scope, headers)
        method = scope.get("method")
        if method != "POST" and headers.get("mcp-protocol-version") in STATELESS_VERSIONS:
            # The stateless era is POST only; its GET and DELETE are old traffic.
            raise HttpError(
                405, "Method Not Allowed", code=SERVER_ERROR, headers=[(b"allow", b"POST")]
            )
        if method == "POST":
            return self._post(scope, receive, send, headers, request, caller)
        if method == "GET" and self.standalone_get:
            return self._get(receive, send, headers, caller)
        if method == "DELETE" and not self.stateless:
            return self._delete(send, headers, caller)
        allow = "POST" if self.stateless else "GET, POST, DELETE"
        if not self.standalone_get and not self.stateless:
            allow = "POST, DELETE"
        raise HttpError(
            405, "Method Not Allowed", code=SERVER_ERROR, headers=[(b"allow", allow.encode())]
        )

    async def _authenticate(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers
    ) -> None:
        """The authorization layer's turn: its metadata documents are answered here;
        a request for a protected path is authenticated (401/403/503 otherwise), then
        routed with its caller."""
        request = AuthRequest.from_scope(scope, headers, self.path)
        document = metadata_document(self.auth, request)
        if document is not None:
            await send_json(send, 200, document, [(b"cache-control", b"max-age=300")])
            return
        caller = None
        path = request.path
        if path == self.path or (self.legacy is not None and self.legacy.serves(path)):
            check_host_and_origin(self.host_policy, scope, headers)
            caller = await authenticate(self.auth, request)
        await self._route(scope, receive, send, headers, request, caller)

    # ------------------------------------------------------------------ POST
    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        request: AuthRequest | None = None,
        caller: AuthenticatedCaller | None = None,
    ) -> None:
        if not accepts(headers, "application/json", "text/event-stream"):
            raise HttpError(
                406, "Not Acceptable: Accept must include application/json and text/event-stream"
            )
        if not is_json_content_type(headers):
            raise HttpError(415, "Unsupported Media Type: Content-Type must be application/json")
        declared = headers.get("content-length")
        if declared is not None and int(declared) > self.limits.max_body_size:
            raise HttpError(413, "Payload Too Large", close=True)
        # A POST of the stateless era names it in its version header, or carries no
        # session id: only then can it be one, and only then is the body read before
        # the session is looked up.
        version = headers.get("mcp-protocol-version")
        candidate = version in STATELESS_VERSIONS or headers.get("mcp-session-id") is None
        channel = None if candidate else await self._lookup(headers, caller)
        buffered = BODY_BUFFERED in scope.get("extensions", ())
        body = await self.manager.read_body(scope, receive, caller, buffered=buffered)
        messages = self._decode(body, channel)
        del body  # a parked POST keeps its decoded messages, not their bytes
        requests = [m for m in messages if isinstance(m, Request)]
        first_id = requests[0].id if len(messages) == 1 and requests else None
        try:
            authorize(self.auth, caller, request, requests)
            if requests and self.draining is not None and self.draining():
                raise shutting_down(self.limits)
            if candidate and self.serves_stateless and is_modern_post(headers, messages):
                await self._modern_post(messages, receive, send, headers, caller)
                return
            if candidate:
                channel = await self._lookup(headers, caller)
            if channel is None:
                channel = await self._open_for(messages, headers, caller, scope)
                if channel is None:
                    await send_empty(send, 202)
                    return
            else:
                self._check_version_value(version, channel)
            await self._serve_post(
                channel, messages, requests, receive, send, caller=caller, headers=headers
            )
        except HttpError as error:
            if error.id is None:
                error.id = first_id
            raise

    async def _modern_post(
        self,
        messages: list[Message],
        receive: Receive,
        send: Send,
        headers: Headers,
        caller: Caller | None,
    ) -> None:
        """One stateless-era POST: checked, then served by a session of its own that
        ends with the response (or with the client leaving: that is cancellation)."""
        message = messages[0]
        if isinstance(message, Notification):
            await send_empty(send, 202)  # none is defined for HTTP in this era
            return
        if not isinstance(message, Request):
            raise HttpError(400, "Invalid Request: a client sends no responses in this era")
        check_modern_post(message, headers, self.supported_versions)
        manager = self.manager
        # A subscription is named by its request's id in every notification of its
        # stream, and lives as long as the stream: it gets a session of its own, as
        # before. Any other request borrows an idle one (take_stateless).
        listen = message.method == "subscriptions/listen"
        channel = manager.take_stateless(pooled=not listen)
        if not listen:
            inner = Request(id=manager.request_id(), method=message.method, params=message.params)
            channel.wire_ids[inner.id] = message.id
            message = inner
        await self._serve_post(
            channel, [message], [message], receive, send, status=status_for, caller=caller,
            headers=headers, terminate=manager.terminate if listen else manager.recycle,
        )  # fmt: skip

    def _decode(self, body: bytes, channel: HttpSessionChannel | None) -> list[Message]:
        version = channel.protocol_version if channel is not None else None
        batch = _BATCHES.get(version, False)  # (supports(), looked up once per revision)
        try:
            decoded = decode(body, allow_batch=batch)
        except RemoteProtocolError as exc:
            hint = exc.error_hint
            if hint is not None:
                raise HttpError(400, exc.args[0], body=encode(hint)) from None
            raise HttpError(400, f"Bad Request: {exc}") from None
        messages = decoded if isinstance(decoded, list) else [decoded]
        if len(messages) > 1 and any(
            isinstance(m, Request) and m.method == "initialize" for m in messages
        ):
            raise HttpError(400, "Invalid Request: initialize cannot be batched")
        return messages

    async def _open_for(
        self, messages: list[Message], headers: Headers, caller: Caller | None, scope: Scope
    ) -> HttpSessionChannel | None:
        """The session for a POST without ``Mcp-Session-Id`` (``None``: nothing to do);
        it belongs to ``caller``."""
        initialize = any(isinstance(m, Request) and m.method == "initialize" for m in messages)
        if not self.stateless:
            if not initialize:
                raise HttpError(400, "Bad Request: Mcp-Session-Id header is required")
            if self.replicas is not None:
                self.replicas.check()
            created = self.manager.create(client=self.manager.client_key(scope, caller))
            created.owner = caller.identity if caller is not None else None
            if self.replicas is not None:
                await self.replicas.create(created, created.owner)
            return created
        if not initialize:
            self._check_version(headers, None)
        if not any(isinstance(m, Request) for m in messages):
            return None  # notifications and answers mean nothing without a session
        channel = self.manager.create(stateless=True)
        if not initialize:
            await self._stateless_handshake(channel, headers.get("mcp-protocol-version"))
        return channel

    async def _stateless_handshake(self, channel: HttpSessionChannel, version: str | None) -> None:
        """Initialize a stateless POST's session in place of the client."""
        init = Request(
            id=f"trimcp-stateless-{secrets.token_hex(8)}",
            method="initialize",
            params={
                "protocolVersion": version or "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "stateless-client", "version": "0"},
            },
        )
        answered = await channel.deliver_internal(init)
        with trio.move_on_after(self.limits.body_timeout):
            await answered.wait()
        await channel.deliver(Notification(method="notifications/initialized"))

    def _serve_post(
        self,
        channel: HttpSessionChannel,
        messages: list[Message],
        requests: list[Request],
        receive: Receive,
        send: Send,
        *,
        status: Callable[[int], int] | None = None,
        caller: Caller | None = None,
        headers: Headers | None = None,
        terminate: Callable[[HttpSessionChannel], object] | None = None,
    ) -> Awaitable[None]:
        # serve_post's awaitable, handed back: a parked POST keeps no frame here.
        # ``terminate``: what becomes of a session made for this POST (it ends).
        return serve_post(
            channel, messages, requests, receive, send, self.limits, status, self.draining,
            self.manager.terminate if terminate is None else terminate, caller, headers,
        )  # fmt: skip

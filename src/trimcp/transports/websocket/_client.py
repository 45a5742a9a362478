"""The WebSocket client transport: wsproto over a Trio TCP (or TLS) stream.

``open_client(websocket("ws://127.0.0.1:8765/mcp"))`` opens one connection, offers the
``mcp`` subprotocol, and carries the session over it until the block ends, when it
closes with 1000. A refused handshake raises :class:`WebSocketHandshakeError` with the
server's status; a connection that breaks later ends the session, failing every waiting
call with :class:`~trimcp.ConnectionClosedError`.
"""

from __future__ import annotations

import ssl
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import final
from urllib.parse import urlsplit, urlunsplit

import attrs
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Event, RejectConnection, RejectData, Request
from wsproto.utilities import RemoteProtocolError as WsRemoteProtocolError

from trimcp.nursery import MessageChannel

from ..http._client_auth import (
    AUTH_HEADERS,
    AuthorizationError,
    HttpAuth,
    HttpAuthSession,
    response_of,
)
from ..http._client_hooks import HttpRequestInfo
from ._channel import WebSocketChannel
from ._frames import WsprotoMessages
from ._limits import SUBPROTOCOL, WebSocketLimits

__all__ = ["WebSocketHandshakeError", "WebSocketTransport", "websocket"]


class WebSocketHandshakeError(ConnectionError):
    """The server refused the WebSocket handshake, or it could not be completed.

    ``status`` is the HTTP status of a refusal (``None`` when none came).
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        body: bytes = b"",
        headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = list(headers)


@attrs.frozen
class _Target:
    host: str
    port: int
    tls: bool
    resource: str
    authority: str


def _target(url: str) -> _Target:
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise ValueError(f"a WebSocket URL is ws:// or wss:// with a host, got {url!r}")
    tls = parts.scheme == "wss"
    port = parts.port or (443 if tls else 80)
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return _Target(parts.hostname, port, tls, resource, parts.netloc)


@final
@attrs.frozen
class WebSocketTransport:
    """A :class:`~trimcp.transports.ClientTransport` for an MCP server over WebSocket.

    Attributes:
      url: ``ws://`` or ``wss://`` URL of the endpoint.
      headers: extra handshake headers (``Authorization`` ...).
      ssl_context: for ``wss://`` (default: the system's trust store).
      limits: message size and handshake/close timeouts (:class:`WebSocketLimits`).
      auth: an authorization layer (``trimcp.auth.OAuth``): its credentials go on the
        upgrade request, and a ``401``/``403`` refusal of the handshake is answered the
        way the Streamable HTTP client answers a challenge, then the handshake is made
        again on a new connection, ``max_auth_retries`` times at most. The resource is the
        URL with ``ws``/``wss`` read as ``http``/``https``.
    """

    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict)
    ssl_context: ssl.SSLContext | None = None
    limits: WebSocketLimits = attrs.field(factory=WebSocketLimits)
    auth: HttpAuth | None = None
    max_auth_retries: int = 4

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MessageChannel]:
        if self.auth is None:
            async with self._connected(None) as channel:
                yield channel
            return
        async with (
            self.auth.attach(http_url(self.url)) as session,
            self._connected(session) as channel,
        ):
            yield channel

    @asynccontextmanager
    async def _connected(self, auth: HttpAuthSession | None) -> AsyncIterator[MessageChannel]:
        messages = await self._authorized_open(auth)
        channel = WebSocketChannel(messages)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(messages.run)
                yield channel
                nursery.cancel_scope.cancel()
        finally:
            await channel.aclose()

    async def _authorized_open(self, auth: HttpAuthSession | None) -> WsprotoMessages:
        """Open, answering authorization challenges (see the class doc)."""
        extra = dict(self.headers)
        if auth is None:
            messages, _ = await self._open(extra)
            return messages
        extra = {k: v for k, v in extra.items() if k.lower() not in AUTH_HEADERS}
        info = HttpRequestInfo("GET", http_url(self.url), None)
        for _ in range(self.max_auth_retries + 1):
            sent = list(await auth.headers(info))
            try:
                messages, accepted = await self._open({**extra, **dict(sent)})
            except WebSocketHandshakeError as exc:
                if exc.status not in (401, 403):
                    raise
                try:
                    again = await auth.challenged(info, sent, response_of(exc.status, exc.headers))
                except AuthorizationError as refused:
                    raise WebSocketHandshakeError(
                        f"authorization failed: {refused}", exc.status, exc.body, exc.headers
                    ) from None
                if not again:
                    raise
                continue
            auth.observe(info, response_of(101, accepted))
            return messages
        raise WebSocketHandshakeError(
            f"still refused after {self.max_auth_retries} authorized retries", 401
        )

    async def _open(
        self, headers: Mapping[str, str]
    ) -> tuple[WsprotoMessages, list[tuple[bytes, bytes]]]:
        target = _target(self.url)
        with trio.move_on_after(self.limits.handshake_timeout) as scope:
            stream = await self._stream(target)
            try:
                return await self._handshake(stream, target, headers)
            except BaseException:
                await trio.aclose_forcefully(stream)
                raise
        assert scope.cancelled_caught
        raise WebSocketHandshakeError(
            f"the WebSocket handshake with {target.authority} took over "
            f"{self.limits.handshake_timeout} s"
        )

    async def _stream(self, target: _Target) -> trio.abc.Stream:
        try:
            stream: trio.abc.Stream = await trio.open_tcp_stream(target.host, target.port)
        except OSError as exc:
            raise WebSocketHandshakeError(
                f"cannot connect to {target.authority}: {exc.strerror or exc}"
            ) from exc
        if not target.tls:
            return stream
        context = self.ssl_context or ssl.create_default_context()
        tls = trio.SSLStream(stream, context, server_hostname=target.host, https_compatible=True)
        try:
            await tls.do_handshake()
        except (trio.BrokenResourceError, OSError) as exc:
            await trio.aclose_forcefully(stream)
            raise WebSocketHandshakeError(
                f"TLS handshake with {target.authority} failed: {exc}"
            ) from exc
        return tls

    async def _handshake(
        self, stream: trio.abc.Stream, target: _Target, headers: Mapping[str, str]
    ) -> tuple[WsprotoMessages, list[tuple[bytes, bytes]]]:
        """The open connection, and the headers of the server's ``101``."""
        ws = WSConnection(ConnectionType.CLIENT)
        request = Request(
            host=target.authority,
            target=target.resource,
            subprotocols=[SUBPROTOCOL],
            extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()],
        )
        await stream.send_all(ws.send(request))
        pending: deque[Event] = deque()
        refusal: RejectConnection | None = None
        body = b""
        while True:
            data = await stream.receive_some(self.limits.receive_size)
            if not data:
                status = refusal.status_code if refusal is not None else None
                raise WebSocketHandshakeError(
                    f"{target.authority} closed the connection during the handshake", status, body
                )
            try:
                ws.receive_data(bytes(data))
                events = list(ws.events())
            except WsRemoteProtocolError as exc:
                raise WebSocketHandshakeError(f"bad handshake answer: {exc}") from None
            for event in events:
                if isinstance(event, AcceptConnection):
                    if event.subprotocol != SUBPROTOCOL:
                        raise WebSocketHandshakeError(
                            f"the server did not select the {SUBPROTOCOL!r} subprotocol"
                        )
                    pending.extend(events[events.index(event) + 1 :])
                    messages = WsprotoMessages(stream, ws, self.limits, pending)
                    return messages, list(event.extra_headers)
                if isinstance(event, RejectConnection):
                    refusal = event
                    if not event.has_body:
                        break
                elif isinstance(event, RejectData):
                    body = (body + event.data)[: self.limits.max_header_bytes]
                    if event.body_finished:
                        break
            else:
                continue
            assert refusal is not None
            raise WebSocketHandshakeError(
                f"{target.authority} refused the WebSocket handshake with "
                f"HTTP {refusal.status_code}: {body.decode('utf-8', 'replace')[:200]}",
                refusal.status_code,
                body,
                refusal.headers,
            )


def websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    ssl_context: ssl.SSLContext | None = None,
    limits: WebSocketLimits | None = None,
    auth: HttpAuth | None = None,
) -> WebSocketTransport:
    """Describe an MCP server at a ``ws://`` / ``wss://`` URL; pass it to ``open_client``.

    ``auth`` (``trimcp.auth.OAuth(...)``) authorizes the upgrade request.
    """
    return WebSocketTransport(
        url=url,
        headers=dict(headers or {}),
        ssl_context=ssl_context,
        limits=limits or WebSocketLimits(),
        auth=auth,
    )


def http_url(url: str) -> str:
    """``url`` with ``ws``/``wss`` read as ``http``/``https`` (the protected resource)."""
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, ""))

"""MCP over an ASGI server's WebSocket connections (hypercorn, or any ASGI server).

The ASGI server does the WebSocket protocol; :class:`AsgiMessages` adapts its events
to :class:`~trimcp.transports.websocket.MessageIO` and :func:`serve_asgi_websocket`
runs one session per connection, with the same checks as the lean server: the
DNS-rebinding guard and the ``mcp`` subprotocol (a refusal closes before accepting,
which the ASGI server answers with HTTP 403). With authorization the handshake's
credentials are verified before accepting: a refusal is sent as its HTTP response (401
and its challenge) where the server offers the ``websocket.http.response`` extension,
else as a close. The session is the caller's, and ends when its credentials expire.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, final

import trio

from trimcp.nursery import MessageChannel

from ..http._asgi_io import error_body
from ..http._auth import Authenticator, AuthRequest, authenticate
from ..http._guards import Headers, HttpError
from ..http._hosts import HostPolicy, check_host_and_origin
from ._channel import CLOSE_POLICY, WebSocketChannel, serve_until_expiry
from ._frames import CLOSE_NORMAL, CLOSE_TOO_BIG, MessageTooBig
from ._limits import SUBPROTOCOL, WebSocketLimits

__all__ = ["AsgiMessages", "serve_asgi_websocket"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@final
class AsgiMessages:
    """Whole messages over one ASGI WebSocket connection (already accepted)."""

    def __init__(self, receive: Receive, send: Send, limits: WebSocketLimits) -> None:
        self._receive = receive
        self._send = send
        self._limits = limits
        self._closed = False

    async def send_text(self, text: str) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket is closed")
        try:
            await self._send({"type": "websocket.send", "text": text})
        except OSError as exc:  # what ASGI servers raise for a gone client
            raise trio.BrokenResourceError(str(exc)) from None

    async def receive(self) -> str | bytes:
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket is closed")
        message = await self._receive()
        if message["type"] == "websocket.disconnect":
            self._closed = True
            raise trio.EndOfChannel
        data: str | bytes | None = message.get("text")
        if data is None:
            data = message.get("bytes") or b""
        if len(data) > self._limits.max_message:
            await self.close(CLOSE_TOO_BIG, "message too big")
            raise MessageTooBig(f"a message grew past {self._limits.max_message} bytes")
        return data

    async def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        if self._closed:
            return
        self._closed = True
        with trio.move_on_after(self._limits.close_timeout) as scope:
            scope.shield = True
            # A client already gone is told nothing: whatever the server raises for it.
            with contextlib.suppress(Exception):
                await self._send({"type": "websocket.close", "code": code, "reason": reason})


async def serve_asgi_websocket(
    scope: Scope,
    receive: Receive,
    send: Send,
    serve_session: Callable[[MessageChannel], Awaitable[object]],
    *,
    host_policy: HostPolicy,
    limits: WebSocketLimits,
    auth: Authenticator | None = None,
) -> None:
    """Serve one MCP session on an ASGI ``websocket`` connection until it ends."""
    first = await receive()
    if first.get("type") != "websocket.connect":
        return
    headers = Headers(scope.get("headers", ()))
    try:
        check_host_and_origin(host_policy, dict(scope), headers)
    except HttpError:
        await send({"type": "websocket.close", "code": CLOSE_POLICY})
        return
    if SUBPROTOCOL not in scope.get("subprotocols", ()):
        await send({"type": "websocket.close", "code": CLOSE_POLICY})
        return
    try:
        caller = await authenticate(
            auth, AuthRequest.from_scope(scope, headers, str(scope.get("path")), "GET")
        )
    except HttpError as refusal:
        await _refuse(scope, send, refusal)
        return
    await send({"type": "websocket.accept", "subprotocol": SUBPROTOCOL})
    channel = WebSocketChannel(AsgiMessages(receive, send, limits), caller=caller)
    try:
        await serve_until_expiry(serve_session, channel)
    finally:
        await channel.aclose()


async def _refuse(scope: Scope, send: Send, refusal: HttpError) -> None:
    """An authorization refusal of the handshake: its HTTP response where the server
    can send one, else a policy close (the server answers 403)."""
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": CLOSE_POLICY})
        return
    body = error_body(refusal)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *refusal.headers,
    ]
    start = "websocket.http.response.start"
    await send({"type": start, "status": refusal.status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})

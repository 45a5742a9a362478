"""MCP over an ASGI server's WebSocket connections (hypercorn, or any ASGI server).

The ASGI server does the WebSocket protocol; :class:`AsgiMessages` adapts its events
to :class:`~trimcp.transports.websocket.MessageIO` and :func:`serve_asgi_websocket`
runs one session per connection, with the same checks as the lean server: the
DNS-rebinding guard and the ``mcp`` subprotocol (a refusal closes before accepting,
which the ASGI server answers with HTTP 403).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, final

import trio

from trimcp.nursery import MessageChannel

from ..http._guards import Headers, HostPolicy, HttpError, check_host_and_origin
from ._channel import WebSocketChannel
from ._frames import CLOSE_NORMAL, CLOSE_TOO_BIG, MessageTooBig
from ._limits import SUBPROTOCOL, WebSocketLimits

__all__ = ["AsgiMessages", "serve_asgi_websocket"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Close code for a refused connection (policy violation).
CLOSE_POLICY: int = 1008


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
) -> None:
    """Serve one MCP session on an ASGI ``websocket`` connection until it ends."""
    first = await receive()
    if first.get("type") != "websocket.connect":
        return
    try:
        check_host_and_origin(host_policy, dict(scope), Headers(scope.get("headers", ())))
    except HttpError:
        await send({"type": "websocket.close", "code": CLOSE_POLICY})
        return
    if SUBPROTOCOL not in scope.get("subprotocols", ()):
        await send({"type": "websocket.close", "code": CLOSE_POLICY})
        return
    await send({"type": "websocket.accept", "subprotocol": SUBPROTOCOL})
    channel = WebSocketChannel(AsgiMessages(receive, send, limits))
    try:
        await serve_session(channel)
    finally:
        await channel.aclose()

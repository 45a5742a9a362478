"""WebSocket upgrades on the lean h11 engine, handed to the app as an ASGI ``websocket`` scope.

An HTTP/1.1 ``GET`` with ``Upgrade: websocket`` leaves the request/response cycle: the
app gets a ``websocket`` scope on the same connection task. ``websocket.accept`` sends
the ``101 Switching Protocols`` head through h11 and hands the socket, with any bytes the
client already sent behind its head, to wsproto's frame layer
(:class:`~trimcp.transports.websocket.WsprotoMessages`: fragments joined under the
message bound, pings answered, the closing handshake done). ``websocket.close`` before
accepting is answered 403, as ASGI servers do; an app that wants another refusal (a 401
with its ``WWW-Authenticate`` challenge) sends it with the ASGI ``websocket.http.response``
extension, which is written as a plain HTTP response. So ``serve_http``'s default engine
serves MCP over WebSocket on the Streamable HTTP endpoint, as hypercorn does; an accepted
connection reads ahead and pings as the lean server's do (``WsprotoMessages.run``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import MutableMapping
from typing import Any, Final

import h11
import trio
from wsproto import ConnectionType
from wsproto.connection import Connection
from wsproto.utilities import generate_accept_token

from ..websocket._frames import CLOSE_NORMAL, MessageTooBig, WsprotoMessages
from ..websocket._limits import WebSocketLimits
from ._header_pairs import lower_pairs

__all__ = ["H11WebSocket", "is_websocket_upgrade"]

_CONNECT: Final = {"type": "websocket.connect"}


def _header(request: h11.Request, name: bytes) -> bytes | None:
    for key, value in lower_pairs(request.headers):
        if key == name:
            return bytes(value)
    return None


def is_websocket_upgrade(request: h11.Request) -> bool:
    """Whether ``request`` asks to become a WebSocket (RFC 6455 §4.2.1)."""
    if request.method != b"GET":  # (a POST's headers are not scanned for it)
        return False
    upgrade = _header(request, b"upgrade")
    return upgrade is not None and upgrade.lower() == b"websocket"


def _subprotocols(request: h11.Request) -> list[str]:
    offered: list[str] = []
    for key, value in request.headers:
        if key == b"sec-websocket-protocol":
            offered += [p.strip() for p in bytes(value).decode("latin-1").split(",") if p.strip()]
    return offered


class H11WebSocket:
    """The ASGI ``receive`` / ``send`` pair of one upgraded connection."""

    def __init__(
        self,
        stream: trio.SocketStream,
        conn: h11.Connection,
        request: h11.Request,
        limits: WebSocketLimits,
    ) -> None:
        self._stream = stream
        self._h11 = conn
        self._request = request
        self._limits = limits
        self._connected = False
        self.messages: WsprotoMessages | None = None
        #: ``(status, reason)`` when the app refused before accepting.
        self.refused: tuple[int, str] | None = None
        self.closed = False
        #: A refusal's response head being sent (``websocket.http.response``).
        self._response: h11.Response | None = None
        #: Where the accepted connection's read-ahead and keep-alive run.
        self.background: trio.Nursery | None = None

    def scope(self, http_scope: MutableMapping[str, Any]) -> dict[str, Any]:
        scope = dict(http_scope)
        scope["type"] = "websocket"
        scope["scheme"] = "ws"
        scope["subprotocols"] = _subprotocols(self._request)
        scope["extensions"] = {"websocket.http.response": {}}
        scope.pop("method", None)
        return scope

    def check(self) -> str | None:
        """Why the upgrade request is not a valid WebSocket handshake, or ``None``."""
        if _header(self._request, b"sec-websocket-version") != b"13":
            return "Sec-WebSocket-Version must be 13"
        if not _header(self._request, b"sec-websocket-key"):
            return "Sec-WebSocket-Key is missing"
        return None

    async def receive(self) -> MutableMapping[str, Any]:
        if not self._connected:
            self._connected = True
            return dict(_CONNECT)
        messages = self.messages
        if messages is None or self.closed:
            return {"type": "websocket.disconnect", "code": CLOSE_NORMAL}
        try:
            data = await messages.receive()
        except MessageTooBig:
            self.closed = True
            return {"type": "websocket.disconnect", "code": 1009}
        except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
            self.closed = True
            return {"type": "websocket.disconnect", "code": CLOSE_NORMAL}
        if isinstance(data, str):
            return {"type": "websocket.receive", "text": data}
        return {"type": "websocket.receive", "bytes": data}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        kind = message["type"]
        if kind == "websocket.accept":
            await self._accept(message)
        elif kind == "websocket.send":
            if self.messages is None:
                raise RuntimeError("websocket.send before websocket.accept")
            text = message.get("text")
            if text is None:
                raise RuntimeError("only text messages are sent on MCP WebSockets")
            await self.messages.send_text(text)
        elif kind == "websocket.http.response.start" and self.messages is None:
            headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", ())]
            status = int(message["status"])
            self._response = h11.Response(
                status_code=status, headers=[*headers, (b"connection", b"close")]
            )
            self.refused = (status, "")
        elif kind == "websocket.http.response.body" and self._response is not None:
            await self._respond(bytes(message.get("body", b"")), message.get("more_body", False))
        elif kind == "websocket.close":
            if self.messages is None:
                self.refused = (403, "Forbidden: the WebSocket was refused")
            else:
                self.closed = True
                await self.messages.close(int(message.get("code", CLOSE_NORMAL)))
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")

    async def _respond(self, body: bytes, more: bool) -> None:
        """Write a refusal's response (the connection closes after it)."""
        data = b""
        if self._response is not None and self._h11.our_state is h11.SEND_RESPONSE:
            data += self._h11.send(self._response) or b""
        if self._h11.our_state is h11.SEND_BODY:
            if body:
                data += self._h11.send(h11.Data(data=body)) or b""
            if not more:
                data += self._h11.send(h11.EndOfMessage()) or b""
        await self._stream.send_all(data)

    async def _accept(self, message: MutableMapping[str, Any]) -> None:
        if self.messages is not None:
            raise RuntimeError("websocket.accept sent twice")
        key = _header(self._request, b"sec-websocket-key") or b""
        headers = [
            (b"upgrade", b"websocket"),
            (b"connection", b"Upgrade"),
            (b"sec-websocket-accept", generate_accept_token(key)),
        ]
        subprotocol = message.get("subprotocol")
        if subprotocol:
            headers.append((b"sec-websocket-protocol", str(subprotocol).encode("latin-1")))
        head = self._h11.send(h11.InformationalResponse(status_code=101, headers=headers))
        await self._stream.send_all(head)
        frames = Connection(ConnectionType.SERVER)
        leftover, _ = self._h11.trailing_data
        pending: deque[Any] = deque()
        if leftover:
            frames.receive_data(bytes(leftover))
            pending.extend(frames.events())
        # wsproto's frame layer has the WSConnection methods WsprotoMessages uses.
        self.messages = WsprotoMessages(self._stream, frames, self._limits, pending)  # type: ignore[arg-type]
        if self.background is not None:
            self.background.start_soon(self.messages.run)

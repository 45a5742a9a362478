"""The server side of the WebSocket opening handshake, over a Trio stream.

:func:`accept_websocket` reads one HTTP upgrade request (bounded in size and time),
checks it, and either accepts it with the ``mcp`` subprotocol or refuses it with a
plain HTTP status and a one-line reason:

* 400: not a WebSocket upgrade, or the ``mcp`` subprotocol was not offered;
* 403: ``Host`` / ``Origin`` refused by the DNS-rebinding guard (:class:`HostPolicy`);
* 404: another path; 408: the handshake took over ``handshake_timeout``;
* 431: the request line and headers exceed ``max_header_bytes``;
* with authorization (:func:`accept_with_caller`), the authenticator's refusal: 401
  with its ``WWW-Authenticate`` challenge, 403, or 503 (:mod:`..http._auth`).
"""

from __future__ import annotations

from collections import deque
from urllib.parse import urlsplit

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Event, RejectConnection, RejectData, Request
from wsproto.utilities import LocalProtocolError as WsLocalProtocolError
from wsproto.utilities import RemoteProtocolError as WsRemoteProtocolError

from ..http._auth import AuthenticatedCaller, Authenticator, AuthRequest, authenticate
from ..http._guards import Headers, HttpError
from ..http._hosts import HostPolicy, check_host_and_origin
from ._frames import WsprotoMessages
from ._limits import SUBPROTOCOL, WebSocketLimits

__all__ = ["accept_websocket", "accept_with_caller", "refuse"]


async def refuse(
    stream: trio.abc.Stream,
    ws: WSConnection | None,
    status: int,
    reason: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Answer the handshake with ``status`` and ``reason`` as a text body (and the
    ``extra`` headers), then close."""
    body = reason.encode("utf-8")
    with trio.move_on_after(2) as scope:
        scope.shield = True
        try:
            if ws is None:
                phrase = {
                    400: "Bad Request",
                    408: "Request Timeout",
                    431: "Request Header Fields Too Large",
                    503: "Service Unavailable",
                }
                head = (
                    f"HTTP/1.1 {status} {phrase.get(status, 'Error')}\r\n"
                    f"content-type: text/plain; charset=utf-8\r\ncontent-length: {len(body)}\r\n"
                    f"{'retry-after: 1' + chr(13) + chr(10) if status == 503 else ''}"
                    "connection: close\r\n\r\n"
                )
                await stream.send_all(head.encode("ascii") + body)
            else:
                headers = [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                    *(extra or ()),
                ]
                data = ws.send(RejectConnection(status_code=status, headers=headers, has_body=True))
                data += ws.send(RejectData(data=body, body_finished=True))
                await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, WsLocalProtocolError):
            pass
    await trio.aclose_forcefully(stream)


async def _read_request(
    stream: trio.abc.Stream, ws: WSConnection, limits: WebSocketLimits, pending: deque[Event]
) -> Request | tuple[int, str]:
    received = 0
    while True:
        data = await stream.receive_some(limits.receive_size)
        if not data:
            return 400, "the connection closed during the handshake"
        received += len(data)
        try:
            ws.receive_data(bytes(data))
            pending.extend(ws.events())
        except WsRemoteProtocolError as exc:
            return 400, f"not a WebSocket upgrade: {exc}"
        if pending and isinstance(pending[0], Request):
            request = pending.popleft()
            assert isinstance(request, Request)
            return request
        if received > limits.max_header_bytes:
            return 431, "the handshake's headers are too large"


async def accept_websocket(
    stream: trio.abc.Stream,
    *,
    path: str,
    host_policy: HostPolicy,
    local_host: str,
    limits: WebSocketLimits,
) -> WsprotoMessages | None:
    """Complete the handshake on ``stream``: the open connection, or ``None`` once refused.

    The stream is owned from the call on: it is closed on refusal.
    """
    accepted = await accept_with_caller(
        stream, path=path, host_policy=host_policy, local_host=local_host, limits=limits
    )
    return accepted[0] if accepted is not None else None


async def accept_with_caller(
    stream: trio.abc.Stream,
    *,
    path: str,
    host_policy: HostPolicy,
    local_host: str,
    limits: WebSocketLimits,
    auth: Authenticator | None = None,
    local_port: int = 0,
) -> tuple[WsprotoMessages, AuthenticatedCaller | None] | None:
    """:func:`accept_websocket`, with the handshake's credentials verified by ``auth``
    (when given): the open connection and its caller, or ``None`` once refused."""
    ws = WSConnection(ConnectionType.SERVER)
    pending: deque[Event] = deque()
    request: Request | tuple[int, str] = 408, "the WebSocket handshake took too long"
    with trio.move_on_after(limits.handshake_timeout):
        try:
            request = await _read_request(stream, ws, limits, pending)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await trio.aclose_forcefully(stream)
            return None
    if not isinstance(request, Request):
        status, reason = request
        await refuse(stream, None, status, reason)
        return None
    problem = _check(request, path, host_policy, local_host)
    if problem is not None:
        await refuse(stream, ws, *problem)
        return None
    headers = Headers([(b"host", request.host.encode("latin-1")), *request.extra_headers])
    target = urlsplit(request.target)
    scope = {
        "scheme": "ws",
        "path": target.path,
        "query_string": target.query.encode("latin-1"),
        "server": (local_host, local_port),
    }
    try:
        caller = await authenticate(auth, AuthRequest.from_scope(scope, headers, path, "GET"))
    except HttpError as refusal:
        await refuse(stream, ws, refusal.status, refusal.message, refusal.headers)
        return None
    try:
        await stream.send_all(ws.send(AcceptConnection(subprotocol=SUBPROTOCOL)))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        await trio.aclose_forcefully(stream)
        return None
    return WsprotoMessages(stream, ws, limits, pending), caller


def _check(
    request: Request, path: str, policy: HostPolicy, local_host: str
) -> tuple[int, str] | None:
    if urlsplit(request.target).path != path:
        return 404, f"no MCP endpoint at {urlsplit(request.target).path}"
    headers = Headers([(b"host", request.host.encode("latin-1")), *request.extra_headers])
    try:
        check_host_and_origin(policy, {"server": (local_host, 0)}, headers)
    except HttpError as exc:
        return exc.status, str(exc)
    if SUBPROTOCOL not in request.subprotocols:
        return 400, f"the WebSocket subprotocol {SUBPROTOCOL!r} is required"
    return None

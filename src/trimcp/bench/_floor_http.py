"""The floor over Streamable HTTP: one answer function, two engines.

:func:`answer_post` is everything the floor does with one request, whichever engine
carries it, and what any MCP server must do per POST: the method must be ``POST``
(else 405), the body one JSON-RPC message in the floor's codec (else 400), every
message but ``initialize`` must carry the session id that ``initialize`` handed out
(``Mcp-Session-Id``; missing: 400, unknown: 404). A request goes to the floor's dispatcher
(:meth:`._floor.FloorServer.handle`: a cancel scope per request, registered by id, so
``notifications/cancelled`` on another POST reaches it) and is answered with one JSON
body; a notification or a response gets 202. No SSE, no reverse calls.

The engines:

* :func:`serve_floor_http` (``floor``): a bare h11 server. One task per connection
  runs each request's handler itself and reads nothing while it waits, so a parked
  call ends by its ``notifications/cancelled``.
* :func:`serve_floor_hypercorn` (``floor-hypercorn``): :class:`FloorApp`, the leanest
  ASGI app doing the same, under hypercorn's Trio worker with the configuration the
  ``trimcp-hypercorn`` server gets (:func:`hypercorn_config`). Hypercorn runs each
  request's app in a task of its own; the app reads the whole body, then answers.
  A parked call waits on the app's ``receive``, whose next message after the body is
  ``http.disconnect``: it ends when its client goes away or is cancelled, whichever
  comes first (trimcp's server watches for the disconnect too).

So ``floor-hypercorn`` / ``floor`` is hypercorn's own cost, and ``trimcp-hypercorn`` /
``floor-hypercorn`` trimcp's (its client and its app) under that engine.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import h11
import trio

from ._floor import FloorServer, Park

if TYPE_CHECKING:
    from hypercorn.config import Config

__all__ = [
    "SESSION",
    "FloorApp",
    "answer_post",
    "hypercorn_config",
    "serve_floor_http",
    "serve_floor_hypercorn",
]

#: The one session id the floor hands out (it keeps no session state beyond it).
SESSION = b"floor"

Headers = list[tuple[bytes, bytes]]
#: Status, headers and body of one HTTP answer.
Answer = tuple[int, Headers, bytes]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_JSON = (b"content-type", b"application/json")
_SESSION_HEADER = (b"mcp-session-id", SESSION)
_POST = (b"POST", "POST")


def _answer(status: int, data: bytes, *extra: tuple[bytes, bytes]) -> Answer:
    return status, [_JSON, (b"content-length", str(len(data)).encode()), *extra], data


def _refusal(status: int, code: int, text: str) -> Answer:
    error = {"code": code, "message": text}
    return _answer(status, json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode())


_ACCEPTED: Answer = (202, [(b"content-length", b"0")], b"")
_NOT_ALLOWED: Answer = (405, [(b"allow", b"POST"), (b"content-length", b"0")], b"")
_NOT_JSON = _refusal(400, -32700, "the body is not one JSON-RPC message")
_NO_SESSION = _refusal(400, -32600, "Mcp-Session-Id is required")
_UNKNOWN_SESSION = _refusal(404, -32600, "unknown session")


def _session_refusal(headers: Iterable[tuple[bytes, bytes]]) -> Answer | None:
    for name, value in headers:
        if name == b"mcp-session-id":
            return None if value == SESSION else _UNKNOWN_SESSION
    return _NO_SESSION


_NAME = itemgetter(1)
_VALUE = itemgetter(2)


def _h11_pairs(headers: Iterable[tuple[bytes, bytes]]) -> Iterable[tuple[bytes, bytes]]:
    """The lower-case pairs of h11's ``headers`` without a Python call per header, as
    trimcp's h11 engine reads them: h11 keeps ``(raw name, name, value)`` triples, and
    iterating its ``Headers`` runs the ``Sequence`` mixin's generator instead."""
    full: Any = getattr(headers, "_full_items", None)
    if type(full) is list:
        return zip(map(_NAME, full), map(_VALUE, full), strict=True)
    return headers


async def answer_post(
    server: FloorServer,
    method: bytes | str,
    body: bytes,
    headers: Iterable[tuple[bytes, bytes]],
    park: Park = trio.sleep_forever,
) -> Answer | None:
    """The answer to one HTTP request carrying ``body``, or ``None`` when the request
    was cancelled (no answer: its client has gone or asked to cancel it).

    ``headers`` are the request's, names in lower case (as h11 and ASGI give them);
    ``park``: what a parked call waits on besides its cancellation (see
    :meth:`._floor.FloorServer.handle`).
    """
    if method not in _POST:
        return _NOT_ALLOWED
    codec = server.codec  # JSON text (a line's terminator is harmless in a body)
    try:
        message = codec.loads(body)
        initialize = message.get("method") == "initialize"
    except (ValueError, AttributeError):
        return _NOT_JSON
    if not initialize:
        refused = _session_refusal(headers)
        if refused is not None:
            return refused
    if "method" not in message or "id" not in message:
        server.received(message)
        return _ACCEPTED
    reply = await server.handle(message, park)
    if reply is None:
        return None
    data = codec.dumps(reply).encode()
    return _answer(200, data, _SESSION_HEADER) if initialize else _answer(200, data)


async def serve_floor_http(*, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """A bare h11 server on 127.0.0.1 (a free port, reported): one POST, one answer."""
    server = FloorServer()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1", backlog=4096)
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(lambda stream: _connection(server, stream), listeners)


async def _connection(server: FloorServer, stream: Any) -> None:
    """Serve one connection until it ends. A client that resets it or sends a malformed
    head ends only its own connection, as with any real server (one frame per
    connection all the same: a parked call's memory is what the floor measures)."""
    conn = h11.Connection(h11.SERVER)
    body: list[bytes] = []
    request: h11.Request | None = None
    async with stream:
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = bytes(await stream.receive_some(65536))
                    conn.receive_data(data)
                    if not data and conn.their_state is not h11.DONE:
                        return
                elif isinstance(event, h11.Data):
                    body.append(bytes(event.data))
                elif isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.EndOfMessage):
                    assert request is not None
                    headers = _h11_pairs(request.headers)
                    answer = await answer_post(server, request.method, b"".join(body), headers)
                    body = []
                    if answer is None:
                        return
                    status, fields, content = answer
                    head = conn.send(h11.Response(status_code=status, headers=fields)) or b""
                    if content:
                        content = conn.send(h11.Data(data=content)) or b""
                    await stream.send_all(head + content + (conn.send(h11.EndOfMessage()) or b""))
                    if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                        return
                    conn.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed):
                    return
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
            return


class FloorApp:
    """The floor as an ASGI 3 application: :func:`answer_post` per HTTP request."""

    def __init__(self) -> None:
        self.server = FloorServer()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self.http(scope, receive, send)
        elif kind == "lifespan":
            await _lifespan(receive, send)

    async def http(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """Read the whole body, answer it; a call whose client went away gets nothing."""
        message = await receive()
        body: bytes = message.get("body", b"")
        if message.get("more_body"):
            chunks = [body]
            while message.get("more_body"):
                message = await receive()
                chunks.append(message.get("body", b""))
            body = b"".join(chunks)
        if message["type"] == "http.disconnect":
            return
        # After the whole body, ``receive`` returns only when the client has gone.
        answer = await answer_post(self.server, scope["method"], body, scope["headers"], receive)
        if answer is None:
            return
        status, headers, content = answer
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        else:
            await send({"type": "lifespan.shutdown.complete"})
            return


def hypercorn_config() -> Config:
    """The hypercorn configuration of the benchmark's hypercorn servers, trimcp's
    (``serve_http(engine="hypercorn", hypercorn_config=...)``) and the floor's: no
    access log line per request, a backlog for a thousand connections at once."""
    from hypercorn.config import Config

    config = Config()
    config.loglevel = "WARNING"
    config.backlog = 4096
    return config


async def serve_floor_hypercorn(
    *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """:class:`FloorApp` under hypercorn's Trio worker on 127.0.0.1 (a free port,
    reported), configured as ``serve_http`` configures hypercorn for trimcp."""
    from hypercorn.trio import serve as hypercorn_serve

    serve: Any = hypercorn_serve  # its app type is a union of TypedDict signatures
    config = hypercorn_config()
    # What serve_http sets on the configuration it is given, so both run alike.
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.graceful_timeout = min(config.graceful_timeout, 3.0)
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(partial(serve, FloorApp(), config))
        task_status.started(int(binds[0].rsplit(":", 1)[1]))

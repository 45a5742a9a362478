"""One HTTP/1.1 connection served by h11: requests in turn, each handed to an ASGI app.

Theory of operation. The connection's task reads a request head, then runs the app in
that same task: no task and no queue per request. The app's ``receive`` reads the
socket itself (body chunks while the body lasts, then the wait for the client to go
away, which yields ``http.disconnect``), and its ``send`` writes to the socket at once
(the response head goes out with the first body chunk, one write for a JSON answer).
A Trio socket stream allows one reader and one writer at a time, which is exactly the
ASGI shape: the app's disconnect watcher reads while its pump writes.

Bounds (from :class:`HttpServerLimits`): the request line and headers together may not
exceed ``max_header_bytes`` (h11's incomplete-event limit, 431); an idle keep-alive
connection is closed after ``keep_alive_timeout``; a head that has begun must be
complete within ``header_timeout`` (slowloris: 408, then close). Both deadlines come
from the connection's :class:`~._connections.Ticket`, which shortens them under
pressure and may end a wait early to make room for another connection (the same 408,
or a plain close before the first byte). The body's size and
deadline are the app's to enforce while it reads (413 and 408). Bytes pipelined behind a
request are kept by h11 up to ``max_header_bytes``; past that the connection stops
reading until the response is done. Whatever leaves the exchange in doubt (a protocol
error, an incomplete response, a cancelled write) closes the connection.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, MutableMapping
from typing import Any, Final, final
from urllib.parse import unquote

import h11
import trio

from .._direct import read_now, receive, send
from .._readable import wait_for_bytes
from ..websocket._limits import WebSocketLimits
from ._asgi_io import BODY_BUFFERED, Scope
from ._connections import Ticket
from ._h11_head import date_field, response, send_whole
from ._h11_websocket import H11WebSocket, is_websocket_upgrade
from ._header_pairs import shared_pairs
from ._server_limits import HttpServerLimits

__all__ = ["AsgiApp", "H11Connection"]

logger = logging.getLogger("trimcp.http.h11")

AsgiApp = Any
#: Bytes asked of the socket per read.
RECEIVE_SIZE: Final = 65536
#: Lingering close: how long, and how many bytes, to drain after our FIN so that a
#: client still sending does not get a reset that destroys the response it is owed.
LINGER_SECONDS: Final = 2.0
LINGER_BYTES: Final = 1024 * 1024
_DISCONNECT: Final = {"type": "http.disconnect"}
_ASGI: Final = {"version": "3.0", "spec_version": "2.3"}
#: ``started`` once the response head is written (its headers are not needed again).
_HEAD_SENT: Final[MutableMapping[str, Any]] = {"type": "http.response.start"}


def _error_response(status: int, message: str) -> tuple[h11.Response, bytes]:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}},
        separators=(",", ":"),
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        date_field(),
    ]
    return response(status, headers), body


async def _prefetched(message: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The body read with the head: no wait, so no scheduler round either (the app
    yields soon enough, waiting for its answer); a cancelled request still stops here."""
    await trio.lowlevel.checkpoint_if_cancelled()
    return message


async def _disconnected() -> MutableMapping[str, Any]:
    return _DISCONNECT


@final
class H11Connection:
    """Serve the requests of one accepted connection with ``app`` until it ends."""

    #: The app's ``send`` need not bound its writes in time: :meth:`_write` does
    #: (``send_timeout``), and only when a write cannot complete at once.
    bounds_writes: Final = True

    __slots__ = (
        "app",
        "bad_body",
        "body_done",
        "broken",
        "client",
        "complete",
        "done_event",
        "h11",
        "head_only",
        "head_sent",
        "limits",
        "prefetched",
        "server",
        "started",
        "stream",
        "ticket",
    )

    def __init__(
        self,
        stream: trio.SocketStream,
        app: AsgiApp,
        limits: HttpServerLimits,
        *,
        server: tuple[str, int] | None,
        client: tuple[str, int] | None,
        ticket: Ticket | None = None,
    ) -> None:
        self.stream = stream
        #: The connection's place in the server's table (``None``: plain deadlines).
        self.ticket = ticket
        self.app = app
        self.limits = limits
        self.server = server
        self.client = client
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
        #: The connection cannot carry another exchange (EOF, reset, broken write).
        self.broken = False
        self._reset_request()

    def _reset_request(self) -> None:
        self.head_only = False
        self.body_done = False
        self.bad_body = False
        self.started: MutableMapping[str, Any] | None = None
        self.head_sent = False
        self.complete = False
        self.done_event: trio.Event | None = None
        #: The body (or its first part) read with the head, for the app's first receive.
        self.prefetched: MutableMapping[str, Any] | None = None

    # ------------------------------------------------------------------ the loop
    async def run(self) -> bool:
        """Serve requests until the connection must end; ``True``: close it gently."""
        while True:
            try:
                request = await self._next_request()
            except h11.RemoteProtocolError as exc:
                if self.broken:  # the client left mid-head: nobody to answer
                    return False
                await self._refuse(exc.error_status_hint, f"Bad Request: {exc}")
                return True
            if request is None:
                return False
            if request.method == b"GET" and is_websocket_upgrade(request):
                await self._serve_websocket(request)
                return False
            scope = self._scope(request)
            request = None  # a parked request keeps only its scope, not the parsed head
            if self._prefetch_body():
                scope["extensions"][BODY_BUFFERED] = {}
            # The app runs here, not in a method of its own: a parked request's task
            # keeps one frame less.
            try:
                await self.app(scope, self._receive, self._send)
            except Exception:
                logger.exception("the ASGI app failed on %s %r", scope["method"], scope["raw_path"])
            await self._conclude()
            if self.broken:
                return False
            if self.h11.our_state is h11.DONE and self.h11.their_state is not h11.DONE:
                await self._drain_body()
            if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
                self.h11.start_next_cycle()
                self._reset_request()
                continue
            return not self.broken

    def _has_bytes(self) -> bool:
        return bool(self.h11.trailing_data[0])

    async def _next_request(self) -> h11.Request | None:
        """The next request head; ``None`` when the client is done or too slow."""
        event = self.h11.next_event()
        #: The socket had nothing a moment ago: the first read below waits before it
        #: tries (a read sure to fail costs a system call and an exception).
        empty = False
        if event is h11.NEED_DATA:
            # Under load the next head arrives while the rest of the round runs (the
            # client answers the response just written): after one scheduler round,
            # the bytes already there are taken with no deadline to set up and no
            # wait for the socket. A round only: the wait below, or the app, checks
            # for cancellation.
            await trio.lowlevel.cancel_shielded_checkpoint()
            if self._read_now():
                event = self.h11.next_event()
            else:
                empty = True
        if event is h11.NEED_DATA:
            began = self._has_bytes()
            with trio.CancelScope(deadline=trio.current_time() + self._timeout(began)) as scope:
                if self.ticket is not None:
                    self.ticket.waiting(scope)
                try:
                    while event is h11.NEED_DATA:
                        data = await self._read(wait=empty)
                        empty = False
                        self.h11.receive_data(data)
                        event = self.h11.next_event()
                        if data and not began and event is h11.NEED_DATA:
                            # A head that began but is not whole: its own deadline now
                            # (a head that came whole in one read needs none).
                            began = True
                            scope.deadline = trio.current_time() + self._timeout(began)
                finally:
                    if self.ticket is not None:
                        self.ticket.working()
            if scope.cancelled_caught:
                if began:
                    await self._refuse(408, "Request Timeout: the request head took too long")
                return None
        if isinstance(event, h11.Request):
            return event
        return None  # ConnectionClosed

    def _prefetch_body(self) -> bool:
        """Take the body bytes read with the head (no I/O): the app's first receive
        gets them at once. ``True`` when the whole body is here, which the scope then
        says (:data:`BODY_BUFFERED`): the app reads it with no deadline to set up."""
        conn = self.h11
        if conn.they_are_waiting_for_100_continue:
            return False
        chunks: list[bytes] = []
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError:
                return False  # the app's receive meets it again, and it is answered 400
            if isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self.body_done = True
                self.prefetched = {"type": "http.request", "body": b"".join(chunks)}
                return True
            elif event is h11.NEED_DATA:
                if chunks:
                    body = b"".join(chunks)
                    self.prefetched = {"type": "http.request", "body": body, "more_body": True}
                return False
            else:  # ConnectionClosed or PAUSED cannot come mid-body
                self.broken = True
                return False

    def _timeout(self, began: bool) -> float:
        if self.ticket is not None:
            return self.ticket.timeout(began=began)
        return self.limits.header_timeout if began else self.limits.keep_alive_timeout

    def _read_now(self) -> bool:
        """Feed h11 the bytes the socket already has, without waiting (see
        :mod:`.._direct`); whether there were any (or the client is gone)."""
        try:
            data = read_now(self.stream, RECEIVE_SIZE)
        except OSError:
            data = b""
        if data is None:
            return False
        if not data:
            self.broken = True
        self.h11.receive_data(data)
        return True

    async def _read(self, *, wait: bool = False) -> bytes:
        """The next bytes (``b""`` once the client is gone; see :mod:`.._direct`);
        ``wait``: the socket was just found empty, so wait for bytes before reading."""
        try:
            if wait:
                await wait_for_bytes(self.stream)
            data = await receive(self.stream, RECEIVE_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            data = b""
        if not data:
            self.broken = True
        return data

    async def _refuse(self, status: int, message: str) -> None:
        """A server-level refusal (bad framing, slow head): JSON-RPC error body, close."""
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        response, body = _error_response(status, message)
        try:
            data = self.h11.send(response) + self.h11.send(h11.Data(data=body))
            data += self.h11.send(h11.EndOfMessage())
            await self.stream.send_all(data)
        except (h11.LocalProtocolError, trio.BrokenResourceError, trio.ClosedResourceError):
            self.broken = True

    # ------------------------------------------------------------------ one request
    def _scope(self, request: h11.Request) -> Scope:
        raw_path, _, query = request.target.partition(b"?")
        path = raw_path.decode("latin-1")
        if "%" in path:
            path = unquote(path)
        method = request.method.decode("latin-1")
        self.head_only = method == "HEAD"
        return {
            "type": "http",
            "asgi": _ASGI,
            "http_version": request.http_version.decode("latin-1"),
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "root_path": "",
            # Plain (name, value) pairs, shared between requests where they may be
            # (h11's own list also keeps each name as sent: a third bytes object per
            # header, for as long as the request runs).
            "headers": shared_pairs(request.headers),
            "client": self.client,
            "server": self.server,
            "extensions": {},
        }

    async def _conclude(self) -> None:
        """After the app: a response it never started is answered here (400 for a
        malformed body, else 500); one it left unfinished closes the connection."""
        if self.started is None and not self.broken:
            if self.bad_body:
                await self._refuse(400, "Bad Request: malformed body")
            else:
                await self._refuse(500, "Internal Server Error")
        elif not self.complete:
            self.broken = True  # a response cut short cannot be framed: close

    async def _serve_websocket(self, request: h11.Request) -> None:
        """Hand an upgrade request to the app as a ``websocket`` scope (the connection
        ends with it)."""
        limits = getattr(self.app, "websocket_limits", None) or WebSocketLimits()
        upgrade = H11WebSocket(self.stream, self.h11, request, limits)
        problem = upgrade.check()
        try:
            event = self.h11.next_event()  # the end of the bodiless GET
        except h11.RemoteProtocolError as exc:
            problem = problem or str(exc)
            event = None
        if problem is not None or not isinstance(event, h11.EndOfMessage):
            await self._refuse(400, f"Bad Request: {problem or 'an upgrade request has no body'}")
            return
        async with trio.open_nursery() as background:  # the read-ahead and keep-alive
            upgrade.background = background
            try:
                await self.app(upgrade.scope(self._scope(request)), upgrade.receive, upgrade.send)
            except Exception:
                logger.exception("the ASGI app failed on a WebSocket at %r", request.target)
            background.cancel_scope.cancel()
        if upgrade.messages is None:
            await self._refuse(*(upgrade.refused or (500, "Internal Server Error")))
        else:
            await upgrade.messages.close()

    async def _drain_body(self) -> None:
        """Read the rest of a body the app left unread, so the connection can go on."""
        left = 64 * 1024
        with trio.move_on_after(self.limits.body_timeout):
            while left > 0 and not self.broken:
                try:
                    event = self.h11.next_event()
                except h11.RemoteProtocolError:
                    self.broken = True
                    return
                if event is h11.NEED_DATA:
                    data = await self._read()
                    left -= len(data)
                    self.h11.receive_data(data)
                elif isinstance(event, h11.EndOfMessage):
                    return
        self.broken = self.broken or self.h11.their_state is not h11.DONE

    # ------------------------------------------------------------------ ASGI receive
    def _receive(self) -> Awaitable[MutableMapping[str, Any]]:
        """The app's ``receive``: what it awaits is handed back, so a request parked
        watching for the client to leave keeps no frame of this dispatch."""
        prefetched = self.prefetched
        if prefetched is not None:
            self.prefetched = None
            return _prefetched(prefetched)
        if self.complete or self.broken:
            return _disconnected()
        if not self.body_done:
            return self._receive_body()
        return self._watch()

    async def _receive_body(self) -> MutableMapping[str, Any]:
        conn = self.h11
        if conn.they_are_waiting_for_100_continue:
            try:
                await self._write(conn.send(h11.InformationalResponse(status_code=100, headers=[])))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return _DISCONNECT
        chunks: list[bytes] = []
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError:
                self.bad_body = self.broken = True
                return _DISCONNECT
            if event is h11.NEED_DATA:
                if chunks:
                    return {"type": "http.request", "body": b"".join(chunks), "more_body": True}
                data = await self._read()
                try:
                    conn.receive_data(data)
                except h11.RemoteProtocolError:
                    self.broken = True
                if self.broken:
                    return _DISCONNECT
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self.body_done = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            else:  # ConnectionClosed or PAUSED cannot come mid-body
                self.broken = True
                return _DISCONNECT

    async def _watch(self) -> MutableMapping[str, Any]:
        """``http.disconnect`` once the client goes away (EOF or reset) or the response
        is done."""
        while not self.complete:
            if len(self.h11.trailing_data[0]) > self.limits.max_header_bytes:
                # Pipelined too far ahead: stop reading until this response is done.
                if self.done_event is None:
                    self.done_event = trio.Event()
                await self.done_event.wait()
                return _DISCONNECT
            try:
                await wait_for_bytes(self.stream)
            except trio.ClosedResourceError:
                self.broken = True
                return _DISCONNECT
            data = await self._read()
            if not data:
                return _DISCONNECT
            self.h11.receive_data(data)
        return _DISCONNECT

    # ------------------------------------------------------------------ ASGI send
    async def _send(self, message: MutableMapping[str, Any]) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self.started is not None:
                raise RuntimeError("http.response.start sent twice")
            self.started = message
            return
        if kind != "http.response.body":
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        if self.started is None or self.complete:
            raise RuntimeError("http.response.body outside a response")
        if self.broken:
            raise trio.BrokenResourceError("the client went away")
        await self._write(self._frame(self.started, message))

    def _frame(self, started: MutableMapping[str, Any], message: MutableMapping[str, Any]) -> bytes:
        """The bytes of a body ``message`` of the response ``started`` (its head with the
        first), h11's state moved past them."""
        conn = self.h11
        body = message.get("body", b"")
        more = message.get("more_body", False)
        data = b""
        if not self.head_sent:
            headers = [*started.get("headers", ()), date_field()]
            status = int(started["status"])
            self.head_sent = True
            self.started = _HEAD_SENT  # a long response keeps no copy of its head
            if not more and body and not self.head_only:
                # One body with its length: head and body by a head checked once.
                whole = send_whole(conn, status, headers, body)
                if whole is not None:
                    self._completed()
                    return whole
            data = conn.send(response(status, headers))
        if body and not self.head_only:
            data += conn.send(h11.Data(data=body))
        if not more:
            data += conn.send(h11.EndOfMessage())
            self._completed()
        return data

    def _completed(self) -> None:
        """The response is whole on h11's side."""
        self.complete = True
        if self.done_event is not None:
            self.done_event.set()

    async def _write(self, data: bytes) -> None:
        """Write ``data`` whole, within ``send_timeout`` (the app's ``send`` leaves the
        deadline to the server: :attr:`bounds_writes`). What the socket buffer takes at
        once goes without a scheduler round or a deadline (see :mod:`.._direct`)."""
        try:
            written = await send(self.stream, data, timeout=self.limits.send_timeout)
        except OSError as exc:  # a reset or a broken pipe, as send_all would say
            self.broken = True
            raise trio.BrokenResourceError(str(exc)) from exc
        except BaseException:
            self.broken = True  # a write cut short (reset, or cancelled)
            raise
        if not written:
            self.broken = True
            raise trio.BrokenResourceError(
                f"a write took over {self.limits.send_timeout:g} s: the client is not reading"
            )

    # ------------------------------------------------------------------ closing
    async def linger(self) -> None:
        """Send FIN, then drain what the client still sends, bounded in time and bytes."""
        try:
            await self.stream.send_eof()
            left = LINGER_BYTES
            with trio.move_on_after(LINGER_SECONDS):
                while left > 0:
                    data = await self.stream.receive_some(RECEIVE_SIZE)
                    if not data:
                        return
                    left -= len(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return

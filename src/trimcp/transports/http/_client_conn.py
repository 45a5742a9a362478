"""HTTP/1.1 client connections: h11 over Trio streams, and a small keep-alive pool.

One :class:`HttpConnection` carries one request/response exchange at a time. After an
exchange whose request and response were both read to the end (h11 states ``DONE``), the
connection goes back to the :class:`ConnectionPool` for reuse; anything else (a response
abandoned halfway, ``Connection: close``, an error) discards it, so a half-read stream is
never reused.

Every network failure below the HTTP layer (refused, reset, TLS failure, truncated or
malformed response, connect timeout) is raised as :class:`HttpTransportError`; the channel
above decides what it means. Its ``stale`` flag says the failure hit a reused connection
before a single response byte arrived: the server had most likely closed that idle
connection, and the request may be retried once on a fresh one.
"""

from __future__ import annotations

import ipaddress
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import final
from urllib.parse import urlsplit

import attrs
import h11
import trio

from trimcp.dispatch import Slots

from .._direct import read_now, receive, send
from .._readable import wait_for_bytes
from ._client_heads import END_OF_MESSAGE, RequestHeads

__all__ = [
    "ConnectionPool",
    "HttpConnection",
    "HttpTransportError",
    "Origin",
    "ResponseTooLarge",
    "content_type",
    "header",
    "open_tcp",
    "parse_url",
]

logger = logging.getLogger("trimcp.http.client")

_RECEIVE_SIZE = 65536

Headers = Sequence[tuple[str, str]]


class ResponseTooLarge(Exception):
    """A response body over the caller's limit (the connection is then not reused)."""


class HttpTransportError(Exception):
    """The connection failed below HTTP (see the module doc)."""

    def __init__(self, message: str, *, stale: bool = False) -> None:
        super().__init__(message)
        self.stale = stale


@final
@attrs.frozen
class Origin:
    """Where to connect, and what to put in the request line and ``Host`` header."""

    scheme: str
    host: str
    port: int
    target: str
    authority: str

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


def parse_url(url: str) -> Origin:
    """Split an ``http://`` or ``https://`` URL; raise :class:`ValueError` for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    if not parts.hostname:
        raise ValueError(f"no host in URL: {url!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials in the URL are not supported; use the headers hook")
    default = 443 if parts.scheme == "https" else 80
    port = parts.port or default
    host = parts.hostname
    shown = f"[{host}]" if ":" in host else host
    authority = shown if port == default else f"{shown}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Origin(parts.scheme, host, port, target, authority)


def header(response: h11.Response, name: bytes) -> str | None:
    """The value of response header ``name`` (lower-case), or ``None``."""
    for key, value in response.headers:
        if key == name:
            return value.decode("latin-1")
    return None


def content_type(response: h11.Response) -> str:
    value = header(response, b"content-type") or ""
    return value.split(";", 1)[0].strip().lower()


async def open_tcp(host: str, port: int) -> trio.SocketStream:
    """A TCP stream to ``host:port``.

    An IP literal (a local server, the common case) is connected directly:
    :func:`trio.open_tcp_stream`'s happy eyeballs (a nursery and a task per attempt,
    about 3 KiB while a connection is being made, times every connection of a burst)
    only helps a name that resolves to several addresses.
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return await trio.open_tcp_stream(host, port)
    family = trio.socket.AF_INET6 if address.version == 6 else trio.socket.AF_INET
    sock = trio.socket.socket(family, trio.socket.SOCK_STREAM)
    try:
        await sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


@final
class HttpConnection:
    """One HTTP/1.1 connection (h11 state machine plus its Trio stream)."""

    __slots__ = ("_got_bytes", "h11", "heads", "idle_since", "reused", "stream")

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        max_header_size: int,
        heads: RequestHeads | None = None,
    ) -> None:
        self.stream = stream
        #: Checked request heads, shared by the connections of one pool.
        self.heads = RequestHeads() if heads is None else heads
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=max_header_size)
        self.reused = False
        self.idle_since = 0.0
        self._got_bytes = False

    def next_cycle(self, now: float) -> None:
        """Ready the connection for its next exchange (it goes idle at ``now``)."""
        self.h11.start_next_cycle()
        self.reused = False
        self._got_bytes = False
        self.idle_since = now

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE

    async def send_request(
        self, method: str, origin: Origin, headers: Headers, body: bytes | None
    ) -> None:
        """Write one whole request."""
        try:
            event, head = self.heads.get(
                method, origin.target, origin.authority, headers, body is not None
            )
            # h11's state moves as for the real request (see ``_client_heads``); the
            # bytes it writes for the stand-in are not sent.
            self.h11.send(event)
            self.h11.send(END_OF_MESSAGE)
        except h11.LocalProtocolError as exc:
            raise ValueError(f"cannot send this HTTP request: {exc}") from exc
        data = head if body is None else b"%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body)
        try:
            await send(self.stream, data)
        except (trio.BrokenResourceError, OSError) as exc:
            raise HttpTransportError(f"sending failed: {exc}", stale=self.reused) from exc

    async def _next_event(self) -> h11.Event:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                if self.h11.trailing_data[1]:
                    # EOF in the middle of the response: h11's words for it are obscure.
                    raise HttpTransportError(
                        "the server closed the connection before its response was complete"
                    ) from exc
                raise HttpTransportError(f"malformed HTTP response: {exc}") from exc
            if event is not h11.NEED_DATA:
                assert isinstance(event, h11.Event)
                return event
            try:
                # receive() with its wait here: a parked call keeps one frame less.
                await trio.lowlevel.checkpoint_if_cancelled()
                data = read_now(self.stream, _RECEIVE_SIZE)
                if data is None:
                    await wait_for_bytes(self.stream)
                    data = await receive(self.stream, _RECEIVE_SIZE)
            except (trio.BrokenResourceError, OSError) as exc:
                raise HttpTransportError(
                    f"receiving failed: {exc}", stale=self.reused and not self._got_bytes
                ) from exc
            if not data and not self._got_bytes and self.reused:
                raise HttpTransportError("the idle connection was closed", stale=True)
            self._got_bytes = self._got_bytes or bool(data)
            try:
                self.h11.receive_data(data)
            except h11.RemoteProtocolError as exc:  # pragma: no cover - h11 defers to next_event
                raise HttpTransportError(f"malformed HTTP response: {exc}") from exc

    async def receive_response(self) -> h11.Response:
        """Read up to the (final) response head; 1xx responses are skipped."""
        while True:
            event = await self._next_event()
            if isinstance(event, h11.Response):
                return event
            if isinstance(event, h11.ConnectionClosed):
                raise HttpTransportError("the server closed the connection before answering")

    async def receive_chunk(self) -> bytes | None:
        """The next piece of the response body, or ``None`` at its end."""
        while True:
            event = await self._next_event()
            if isinstance(event, h11.Data):
                if event.data:
                    return bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return None
            elif isinstance(event, h11.ConnectionClosed):
                raise HttpTransportError("the connection closed in the middle of a response")

    async def read_body(self, limit: int) -> bytes:
        """The whole body; more than ``limit`` bytes raises :class:`ResponseTooLarge`."""
        body = bytearray()
        while (chunk := await self.receive_chunk()) is not None:
            body += chunk
            if len(body) > limit:
                raise ResponseTooLarge(f"the answer is larger than {limit} bytes")
        return bytes(body)

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)


@final
class ConnectionPool:
    """At most ``max_connections`` live connections to one origin; ``max_idle`` kept alive
    (more while checkouts wait: a connection given back then is kept for them).

    ``checkout()`` waits while all connections are busy (an SSE response holds its
    connection for the whole stream). At most ``max_connecting`` connections are being
    opened at once; a checkout past that waits for whichever comes first, a connection
    given back or a free opening slot, so a burst never floods the server's accept
    backlog. Idle connections older than ``idle_timeout``
    seconds are closed instead of reused, since servers drop idle keep-alive connections
    (hypercorn after 5 s).
    """

    def __init__(
        self,
        origin: Origin,
        *,
        ssl_context: ssl.SSLContext | None,
        max_connections: int,
        max_idle: int,
        idle_timeout: float,
        max_connecting: int = 16,
        connect_timeout: float,
        max_header_size: int,
    ) -> None:
        self.origin = origin
        self._ssl = ssl_context
        #: At most ``max_connections`` exchanges at once (``trimcp.dispatch.Slots``: no
        #: scheduler round when one is free, handed on in arrival order).
        self._slots = Slots(max_connections)
        self._max_idle = max_idle
        self._idle_timeout = idle_timeout
        self._connect_timeout = connect_timeout
        self._max_header_size = max_header_size
        self._idle: list[HttpConnection] = []
        self._heads = RequestHeads()
        try:  # the run's clock, without the two frames around it in trio.current_time
            self._now: Callable[[], float] = trio.lowlevel.current_clock().current_time
        except RuntimeError:  # made outside a run: each reading asks the run's clock
            self._now = trio.current_time
        self._max_connecting = max_connecting
        self._connecting = 0
        #: Checkouts waiting for a connection given back or an opening slot ...
        self._waiting = trio.lowlevel.ParkingLot()
        #: ... and retries waiting for a slot (they never take a used connection).
        self._waiting_fresh = trio.lowlevel.ParkingLot()
        self._closed = False
        #: Connections opened so far (for tests and diagnostics).
        self.opened = 0

    async def _connect(self) -> HttpConnection:
        origin = self.origin
        with trio.move_on_after(self._connect_timeout) as scope:
            try:
                stream: trio.abc.Stream = await open_tcp(origin.host, origin.port)
            except OSError as exc:
                raise HttpTransportError(
                    f"cannot connect to {origin.authority}: {exc.strerror or exc}"
                ) from exc
            if origin.tls:
                context = self._ssl or ssl.create_default_context()
                tls = trio.SSLStream(
                    stream, context, server_hostname=origin.host, https_compatible=True
                )
                try:
                    await tls.do_handshake()
                except (trio.BrokenResourceError, OSError) as exc:
                    await trio.aclose_forcefully(stream)
                    raise HttpTransportError(
                        f"TLS handshake with {origin.authority} failed: {exc}"
                    ) from exc
                stream = tls
        if scope.cancelled_caught:
            raise HttpTransportError(
                f"connecting to {origin.authority} took longer than {self._connect_timeout:g} s"
            )
        self.opened += 1
        return HttpConnection(stream, max_header_size=self._max_header_size, heads=self._heads)

    async def _take(self, fresh: bool) -> HttpConnection:
        while True:
            now = self._now()
            while self._idle and not fresh:
                conn = self._idle.pop()
                if now - conn.idle_since <= self._idle_timeout:
                    conn.reused = True
                    return conn
                await conn.aclose()
            if self._connecting < self._max_connecting:
                break
            await (self._waiting_fresh if fresh else self._waiting).park()
        self._connecting += 1
        try:
            return await self._connect()
        finally:
            self._connecting -= 1
            # The slot goes to a retry first: only a slot can serve it.
            if not self._waiting_fresh.unpark():
                self._waiting.unpark()

    @asynccontextmanager
    async def checkout(self, *, fresh: bool = False) -> AsyncIterator[HttpConnection]:
        """A connection for one exchange; reused afterwards only if the exchange completed."""
        conn = await self.acquire(fresh=fresh)
        try:
            yield conn
        finally:
            await self.release(conn)

    async def acquire(self, *, fresh: bool = False) -> HttpConnection:
        """:meth:`checkout` without a context manager: every ``acquire`` is followed by
        one :meth:`release` of the connection it returned, whatever happens."""
        if self._closed:
            raise trio.ClosedResourceError("the HTTP client is closed")
        # A cancellation point; a scheduler round only when no slot is free.
        await trio.lowlevel.checkpoint_if_cancelled()
        if not self._slots.take_nowait():
            await self._slots.wait()  # woken holding the slot its giver freed
        try:
            if not self._idle:
                # A scheduler round first: an exchange that has just ended (a
                # notification's 202 read) gives its connection back instead of this
                # checkout opening another. With one idle, no round (the common case).
                await trio.lowlevel.cancel_shielded_checkpoint()
            return await self._take(fresh)
        except BaseException:
            self._slots.release()
            raise

    async def release(self, conn: HttpConnection) -> None:
        """Give back a connection :meth:`acquire` returned (reused only if its exchange
        completed)."""
        try:
            await self._put_back(conn)
        finally:
            self._slots.release()

    async def _put_back(self, conn: HttpConnection) -> None:
        # Kept beyond max_idle while checkouts wait for a connection: one of them takes
        # it next. Closing it would make that one open a new connection (a connect and
        # an accept per call under load, where a pool of 32 served 100 callers).
        busy = self._slots.waiting
        if conn.reusable and not self._closed and (busy or len(self._idle) < self._max_idle):
            conn.next_cycle(self._now())
            self._idle.append(conn)
            self._waiting.unpark()
            return
        with trio.CancelScope(shield=True):
            await conn.aclose()

    async def aclose(self) -> None:
        """Close the idle connections; connections in use close when given back."""
        self._closed = True
        idle, self._idle = self._idle, []
        with trio.CancelScope(shield=True):
            for conn in idle:
                await conn.aclose()

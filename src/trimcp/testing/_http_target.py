"""A raw Streamable HTTP peer: each frame is one POST with exactly the bytes given.

No trimcp client code is involved, so a frame can be anything (bad JSON, duplicate keys).
What comes back is tagged with the frame it answers: each message of a JSON body or of
the POST's SSE stream, or the bare status of a ``202`` or an error. A POST of requests
counts as sent once written (a server may hold its response head back until it has the
answer); one of notifications or responses once its status came. A POST's SSE stream
that the server ends before the answer is resumed, as the transport says: after
``retry`` ms, ``GET`` with ``Last-Event-ID`` (at most :data:`MAX_RESUMES` times). The
standalone GET stream is opened after initialization when the server offers one.
Closing sends DELETE and then checks that the server forgot the session (``404`` for
its id).

Only loopback addresses are contacted unless the target is built with
``allow_remote=True``; plain ``http`` only.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.parse

import h11
import trio

from trimcp.wire import SSEDecoder

from ._frames import dumps
from ._inbox import Inbound, Inbox

__all__ = ["HttpTarget", "is_loopback_url"]

#: Largest body read from one response (10 MiB).
MAX_BODY = 10 << 20
#: Seconds to wait for the answer to DELETE and to the probe after it.
CLOSE_TIMEOUT = 5.0
#: Resumptions of one POST's SSE stream before its answer counts as lost.
MAX_RESUMES = 3
#: The longest ``retry`` honoured before a resumption, in seconds.
MAX_RETRY_WAIT = 5.0


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is a loopback address (or ``localhost``)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Exchange:
    """One HTTP request on its own connection: status, headers, then the body as it comes."""

    def __init__(self, stream: trio.SocketStream, host: str) -> None:
        self.stream = stream
        self.host = host
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_BODY)

    async def start(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> h11.Response:
        await self.write(method, target, headers, body)
        return await self.response()

    async def write(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> None:
        all_headers = [("Host", self.host), ("Content-Length", str(len(body))), *headers]
        data = self.h11.send(h11.Request(method=method, target=target, headers=all_headers))
        data += self.h11.send(h11.Data(data=body)) if body else b""
        data += self.h11.send(h11.EndOfMessage())
        await self.stream.send_all(data)

    async def response(self) -> h11.Response:
        while True:
            event = await self._next()
            if isinstance(event, h11.Response):
                return event

    async def _next(self) -> object:
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                chunk = await self.stream.receive_some(65536)
                self.h11.receive_data(bytes(chunk))
                continue
            if isinstance(event, h11.ConnectionClosed):
                raise trio.BrokenResourceError("connection closed")
            return event

    async def chunks(self) -> list[bytes] | None:
        """The next body chunks, or ``None`` at the end of the body."""
        event = await self._next()
        if isinstance(event, h11.Data):
            return [bytes(event.data)]
        return None


def _header(response: h11.Response, name: bytes) -> str | None:
    for key, value in response.headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class _HttpConnection:
    def __init__(self, target: HttpTarget, nursery: trio.Nursery) -> None:
        self.inbox = Inbox()
        self.target = target
        self.nursery = nursery
        self.session_id: str | None = None
        self.version: str | None = None
        self.problem: str | None = None
        self.get_started = False

    def _headers(self) -> list[tuple[str, str]]:
        headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ]
        if self.session_id is not None:
            headers.append(("Mcp-Session-Id", self.session_id))
        if self.version is not None and self.version >= "2025-06-18":
            headers.append(("MCP-Protocol-Version", self.version))
        return headers

    async def _open(self) -> _Exchange:
        stream = await trio.open_tcp_stream(self.target.host, self.target.port)
        return _Exchange(stream, self.target.netloc)

    async def send(self, data: bytes, index: int) -> None:
        ready = trio.Event()
        self.nursery.start_soon(self._post, data, index, ready)
        await ready.wait()

    async def _post(self, data: bytes, index: int, ready: trio.Event) -> None:
        try:
            exchange = await self._open()
        except OSError as exc:
            self.problem = f"cannot connect: {exc}"
            ready.set()
            return
        ids = _request_ids(data)
        try:
            async with exchange.stream:
                await exchange.write("POST", self.target.path, self._headers(), data)
                if ids:
                    ready.set()
                response = await exchange.response()
                session = _header(response, b"mcp-session-id")
                if session is not None and self.session_id is None:
                    self.session_id = session
                ready.set()
                decoder = await self._read_body(exchange, response, index, ids)
            if decoder is not None:
                await self._resume(decoder, index, ids)
        except (trio.BrokenResourceError, OSError, h11.ProtocolError) as exc:
            self.inbox.put(Inbound(f"connection failed: {exc}".encode(), index, status=599))
        finally:
            ready.set()

    async def _read_body(
        self,
        exchange: _Exchange,
        response: h11.Response,
        index: int | None,
        ids: frozenset[object] = frozenset(),
    ) -> SSEDecoder | None:
        """Read one response; the SSE decoder when its stream ended before the answer
        to ``ids`` and can be resumed (it carried an event id)."""
        kind = (_header(response, b"content-type") or "").split(";")[0].strip().lower()
        if kind == "text/event-stream" and response.status_code == 200:
            decoder = SSEDecoder(max_event_size=MAX_BODY)
            owed = set(ids)
            await self._read_events(exchange, decoder, index, owed)
            return decoder if owed and decoder.last_event_id else None
        body = bytearray()
        while (chunks := await exchange.chunks()) is not None:
            for chunk in chunks:
                body += chunk
                if len(body) > MAX_BODY:
                    self.inbox.put(Inbound(b"body too large", index, status=599))
                    return None
        if response.status_code == 200 and kind == "application/json" and body.strip():
            self.inbox.put(Inbound(bytes(body), index))
        else:
            self.inbox.put(Inbound(bytes(body), index, status=response.status_code))
        return None

    async def _read_events(
        self, exchange: _Exchange, decoder: SSEDecoder, index: int | None, owed: set[object]
    ) -> None:
        """Queue each event's message; strike from ``owed`` the ids answered."""
        while (chunks := await exchange.chunks()) is not None:
            for chunk in chunks:
                for event in decoder.feed(chunk):
                    if event.data.strip():
                        self.inbox.put(Inbound(event.data.encode("utf-8"), index))
                        owed -= _answered_ids(event.data)

    async def _resume(self, decoder: SSEDecoder, index: int, ids: frozenset[object]) -> None:
        """Resume a POST stream that ended before its answer (see the module doc)."""
        owed = set(ids)
        for _ in range(MAX_RESUMES):
            retry = decoder.retry / 1000 if decoder.retry is not None else 1.0
            await trio.sleep(min(retry, MAX_RETRY_WAIT))
            exchange = await self._open()
            async with exchange.stream:
                headers = [(k, v) for k, v in self._headers() if k != "Content-Type"]
                headers = [(k, "text/event-stream" if k == "Accept" else v) for k, v in headers]
                headers.append(("Last-Event-ID", decoder.last_event_id))
                response = await exchange.start("GET", self.target.path, headers, b"")
                kind = (_header(response, b"content-type") or "").split(";")[0].strip()
                if response.status_code != 200 or kind.lower() != "text/event-stream":
                    return  # not resumable: the answer stays missing, and is reported
                await self._read_events(exchange, decoder, index, owed)
            if not owed:
                return

    def negotiated(self, version: str) -> None:
        self.version = version
        if not self.get_started and self.session_id is not None:
            self.get_started = True
            self.nursery.start_soon(self._get_stream)

    async def _get_stream(self) -> None:
        try:
            exchange = await self._open()
            async with exchange.stream:
                headers = [(k, v) for k, v in self._headers() if k != "Content-Type"]
                headers = [(k, "text/event-stream" if k == "Accept" else v) for k, v in headers]
                response = await exchange.start("GET", self.target.path, headers, b"")
                if response.status_code == 200:
                    await self._read_body(exchange, response, None)
        except (trio.BrokenResourceError, OSError, h11.ProtocolError):
            return

    def dead(self) -> str | None:
        return self.problem

    async def close(self) -> str | None:
        if self.session_id is None:
            return None
        headers = [("Mcp-Session-Id", self.session_id)]
        with trio.move_on_after(CLOSE_TIMEOUT) as scope:
            exchange = await self._open()
            async with exchange.stream:
                response = await exchange.start("DELETE", self.target.path, headers, b"")
            if response.status_code in (405, 404):
                return None  # the server does not let clients end sessions (allowed)
            if response.status_code >= 300:
                return f"DELETE of the session was answered {response.status_code}"
            probe = await self._open()
            async with probe.stream:
                ping = dumps({"jsonrpc": "2.0", "id": "after-delete", "method": "ping"})
                answer = await probe.start("POST", self.target.path, self._headers(), ping)
            if answer.status_code != 404:
                return f"a request in a deleted session was answered {answer.status_code}, not 404"
            return None
        if scope.cancelled_caught:
            return f"DELETE of the session was not answered within {CLOSE_TIMEOUT} s"
        return None


def _request_ids(data: bytes) -> frozenset[object]:
    """The ids of the requests a frame carries (none for anything else)."""
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return frozenset()
    found = value if isinstance(value, list) else [value]
    return frozenset(
        m["id"]
        for m in found
        if isinstance(m, dict) and "method" in m and isinstance(m.get("id"), str | int)
    )


def _answered_ids(data: str) -> set[object]:
    """The ids a message (or batch) of an SSE event answers."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return set()
    found = value if isinstance(value, list) else [value]
    return {
        m.get("id")
        for m in found
        if isinstance(m, dict) and "method" not in m and ("result" in m or "error" in m)
    }


class HttpTarget:
    """A Streamable HTTP endpoint (``http://HOST:PORT/PATH``); a session per connection."""

    clock = "real"

    def __init__(self, url: str, *, allow_remote: bool = False) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"expected an http:// URL, got {url!r}")
        if not allow_remote and not is_loopback_url(url):
            raise ValueError(f"{url!r} is not a loopback address (allow it explicitly)")
        self.url = url
        self.host = parts.hostname
        self.port = parts.port or 80
        self.netloc = parts.netloc
        self.path = parts.path or "/"
        if parts.query:
            self.path += "?" + parts.query

    def describe(self) -> str:
        return f"Streamable HTTP: {self.url}"

    async def connect(self, nursery: trio.Nursery) -> _HttpConnection:
        return _HttpConnection(self, nursery)

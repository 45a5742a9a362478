"""The 2024-11-05 HTTP+SSE transport on the client side, and the fallback to it.

A server of that revision has no Streamable HTTP endpoint: the client ``GET``\\ s the URL,
whose SSE stream opens with an ``endpoint`` event naming where to ``POST`` messages;
every message the server sends (answers, its own requests, notifications) then arrives
as a ``message`` event on that one stream, and each POST is merely accepted (``202``).

:class:`LegacySse` is that mode of an :class:`~._client_channel.HttpClientChannel`:

* **Fallback** (``legacy_sse="fallback"``, the default; the backwards-compatibility
  procedure of the 2025-03-26+ transports): when the POST of ``initialize`` (with no
  session yet) is answered 400, 404 or 405, the channel GETs the URL; if an ``endpoint``
  event arrives it switches to this transport for good and sends the ``initialize``
  there. If the GET fails too, ``initialize`` fails with both reasons.
* **Always** (``legacy_sse="always"``, :func:`~._client.legacy_sse`): the stream is
  opened before the first message, with no Streamable HTTP attempt.

The endpoint must be on the URL's own origin (scheme, host and port): an ``endpoint``
event naming another one is refused, so a server cannot make the client send its
messages (and headers) elsewhere. The endpoint event must come within
``connect_timeout``. The stream cannot be resumed: when it ends, the channel breaks and
every waiting call fails with :class:`~trimcp.ConnectionClosedError`. A POST answered
with an error status fails its request (or is logged, for a notification or response).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, final
from urllib.parse import urljoin, urlsplit

import attrs
import trio

from trimcp.wire import (
    Message,
    RemoteProtocolError,
    Request,
    SSEDecoder,
    SSEEvent,
    decode,
    encode,
)

from ._client_conn import (
    HttpConnection,
    HttpTransportError,
    Origin,
    ResponseTooLarge,
    content_type,
    parse_url,
)
from ._client_errors import http_error, phrase

if TYPE_CHECKING:
    from ._client_channel import HttpClientChannel

__all__ = ["FALLBACK_STATUSES", "LegacySse", "LegacySseError"]

logger = logging.getLogger("trimcp.http.client")

FALLBACK_STATUSES = frozenset({400, 404, 405})
"""Answers to the first ``initialize`` POST that make the client try HTTP+SSE."""

_BODY_LIMIT = 64 * 1024


class LegacySseError(Exception):
    """The HTTP+SSE stream could not be opened (no SSE answer, no ``endpoint`` event)."""


@final
class LegacySse:
    """The HTTP+SSE mode of one channel (see the module doc)."""

    def __init__(self, channel: HttpClientChannel) -> None:
        self.channel = channel
        #: Where messages are POSTed, once the ``endpoint`` event arrived.
        self.endpoint: Origin | None = None
        self._opening = trio.Lock()

    @property
    def active(self) -> bool:
        return self.endpoint is not None

    # ------------------------------------------------------------------ the stream
    async def open(self) -> None:
        """Open the stream and wait for its ``endpoint`` event (idempotent).

        Raises :class:`LegacySseError` (or :class:`HttpTransportError`) when the server
        does not offer the transport."""
        async with self._opening:
            if self.endpoint is None:
                await self.channel.start_task(self._stream)

    async def _stream(self, *, task_status: trio.TaskStatus[None]) -> None:
        channel = self.channel
        base = [("Accept", "text/event-stream"), ("Cache-Control", "no-cache")]
        headers = await channel.headers("GET", None, base)
        async with channel.pool.checkout() as conn:
            await conn.send_request("GET", channel.pool.origin, headers, None)
            decoder, pending = await self._endpoint(conn)
            assert self.endpoint is not None
            logger.info("speaking HTTP+SSE (2024-11-05); messages go to %s", self.endpoint.target)
            task_status.started()
            try:
                for event in pending:
                    await self._on_event(event)
                while (chunk := await conn.receive_chunk()) is not None:
                    for event in decoder.feed(chunk):
                        await self._on_event(event)
                reason = "the server ended the HTTP+SSE stream"
            except (HttpTransportError, RemoteProtocolError) as exc:
                reason = f"lost the HTTP+SSE stream: {exc}"
        channel.break_channel(reason)

    async def _endpoint(self, conn: HttpConnection) -> tuple[SSEDecoder, list[SSEEvent]]:
        """Read the GET's answer up to the ``endpoint`` event, within ``connect_timeout``;
        return the stream's decoder and the events that followed it in the same read."""
        config = self.channel.config
        decoder = SSEDecoder(max_event_size=config.max_message_size)
        pending: list[SSEEvent] = []
        try:
            with trio.fail_after(config.connect_timeout):
                response = await conn.receive_response()
                status = response.status_code
                if status != 200 or content_type(response) != "text/event-stream":
                    reason = response.reason.decode("latin-1", "replace") or phrase(status)
                    raise LegacySseError(f"GET answered HTTP {status} {reason}, not SSE")
                while self.endpoint is None:
                    chunk = await conn.receive_chunk()
                    if chunk is None:
                        raise LegacySseError("the stream ended before its endpoint event")
                    for event in decoder.feed(chunk):
                        if self.endpoint is not None:
                            pending.append(event)
                        elif event.event == "endpoint":
                            self.endpoint = self._resolve(event.data)
        except trio.TooSlowError:
            raise LegacySseError("no endpoint event within connect_timeout") from None
        return decoder, pending

    def _resolve(self, data: str) -> Origin:
        """The endpoint event's URI, on the URL's own origin only (module doc)."""
        url = urljoin(self.channel.config.url, data.strip())
        origin = self.channel.pool.origin
        try:
            target = parse_url(url)
        except ValueError as exc:
            raise LegacySseError(f"unusable endpoint {data!r}: {exc}") from None
        same = (target.scheme, target.host, target.port) == (
            origin.scheme,
            origin.host,
            origin.port,
        )
        if not same or urlsplit(url).fragment:
            raise LegacySseError(f"the endpoint {data!r} is not on the server's own origin")
        return attrs.evolve(origin, target=target.target)

    async def _on_event(self, event: SSEEvent) -> None:
        if event.event != "message":
            logger.debug("ignoring HTTP+SSE event of type %r", event.event)
            return
        try:
            message = decode(event.data)
        except RemoteProtocolError as exc:
            logger.warning("ignoring an undecodable HTTP+SSE message: %s", exc)
            return
        await self.channel.deliver(message)

    # ------------------------------------------------------------------ sending
    async def send(self, message: Message) -> None:
        """POST ``message`` to the endpoint; its answer (if any) comes on the stream."""
        channel = self.channel
        endpoint = self.endpoint
        assert endpoint is not None
        request_id = message.id if isinstance(message, Request) else None
        if request_id is not None:
            channel.expect(request_id)
        headers = await channel.headers("POST", message, (("Content-Type", "application/json"),))
        try:
            async with channel.pool.checkout() as conn:
                await conn.send_request("POST", endpoint, headers, encode(message))
                response = await conn.receive_response()
                try:
                    body = await conn.read_body(_BODY_LIMIT)
                except ResponseTooLarge:
                    body = b""
        except HttpTransportError as exc:
            channel.break_channel(f"lost the connection to the server: {exc}")
            raise trio.BrokenResourceError(channel.failure) from exc
        status = response.status_code
        if 200 <= status < 300:
            return
        reason = response.reason.decode("latin-1", "replace") or phrase(status)
        if request_id is not None:
            await channel.fail(request_id, http_error(status, reason, body))
        else:
            logger.warning("the server refused a message with HTTP %d", status)

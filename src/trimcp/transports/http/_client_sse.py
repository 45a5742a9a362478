"""Reading SSE streams for the HTTP client: POST streams, the GET stream, resumption.

Each stream has its own :class:`~trimcp.wire.SSEDecoder`, which keeps that stream's last
event id and ``retry``; a resumption goes on with the same decoder, so ``Last-Event-ID``
is always the last event *completed* on that stream.

Reconnecting (the standalone GET stream when it ends; a POST stream that ended before its
answer) follows one rule: wait ``retry`` ms as the server asked (``reconnect_delay``, 1 s,
when it did not), then GET with ``Last-Event-ID``. A GET that brings no new event id is a
miss; after consecutive misses the wait grows exponentially with jitter (never below
``retry``, capped at ``max_reconnect_delay``), and after ``max_reconnects`` misses in a row
the reader gives up. ``405`` (no GET stream offered), other 4xx and non-SSE answers stop
at once; only 429/5xx and network failures are retried.
"""

from __future__ import annotations

import enum
import logging
import random
from typing import TYPE_CHECKING, final

import h11
import trio

from trimcp.dispatch import connection_closed_error
from trimcp.wire import (
    INTERNAL_ERROR,
    ErrorObject,
    RemoteProtocolError,
    Request,
    RequestId,
    SSEDecoder,
    SSEEvent,
    decode,
)

from ._client_conn import HttpConnection, HttpTransportError, content_type
from ._client_gate import RETRY, Challenge
from ._client_hooks import HttpRequestInfo
from ._client_reinit import session_expired_error

if TYPE_CHECKING:
    from ._client_channel import HttpClientChannel

__all__ = ["Outcome", "SseReader"]

logger = logging.getLogger("trimcp.http.client")


class Outcome(enum.Enum):
    """How one GET ended."""

    DONE = "done"  # the awaited answer arrived
    ENDED = "ended"  # the stream ended, or the server is busy: reconnect
    NETWORK = "network"  # the connection failed: reconnect
    STOP = "stop"  # the server declined (405, 4xx, not SSE): do not reconnect
    EXPIRED = "expired"  # 404: the session is gone (the channel renews or ends it)


@final
class SseReader:
    """The SSE side of one :class:`HttpClientChannel` (see the module doc)."""

    def __init__(self, channel: HttpClientChannel) -> None:
        self.channel = channel
        self.config = channel.config
        #: GET requests made so far (for tests and diagnostics).
        self.get_requests = 0
        #: The last network failure seen by a GET.
        self.last_error: str | None = None
        #: The session a GET last got 404 for.
        self.lost_session: str | None = None

    def new_decoder(self) -> SSEDecoder:
        return SSEDecoder(max_event_size=self.config.max_message_size)

    def delay(self, retry_ms: int | None, misses: int) -> float:
        """Seconds to wait before the next GET after ``misses`` unproductive ones."""
        base: float = retry_ms / 1000 if retry_ms is not None else self.config.reconnect_delay
        if misses <= 1:
            return base
        backoff = min(self.config.max_reconnect_delay, base * 2.0 ** (misses - 1))
        return max(base, backoff * random.uniform(0.5, 1.0))

    # ------------------------------------------------------------------ reading
    async def _on_event(self, event: SSEEvent, stream_of: RequestId | None) -> None:
        if event.event != "message":
            logger.debug("ignoring SSE event of type %r", event.event)
            return
        try:
            message = decode(event.data, allow_batch=True)
        except RemoteProtocolError as exc:
            logger.warning("ignoring an undecodable SSE message: %s", exc)
            return
        if stream_of is not None and any(
            isinstance(m, Request) for m in (message if isinstance(message, list) else [message])
        ):
            self.channel.carried_request(stream_of)
        await self.channel.deliver(message)

    async def _feed(self, decoder: SSEDecoder, chunk: bytes, stream_of: RequestId | None) -> None:
        for event in decoder.feed(chunk):
            await self._on_event(event, stream_of)

    async def pump(
        self, conn: HttpConnection, decoder: SSEDecoder, until: RequestId | None
    ) -> bool:
        """Deliver the stream's messages until it ends; True once ``until`` was answered.

        After the answer the stream is read for ``stream_linger`` more seconds, so a server
        that ends it promptly leaves a reusable connection.
        """
        while (chunk := await conn.receive_chunk()) is not None:
            await self._feed(decoder, chunk, until)
            if until is not None and not self.channel.waiting(until):
                with trio.move_on_after(self.config.stream_linger):
                    while (chunk := await conn.receive_chunk()) is not None:
                        await self._feed(decoder, chunk, until)
                    await self._feed(decoder, b"", until)
                return True
        await self._feed(decoder, b"", until)
        return until is not None and not self.channel.waiting(until)

    async def read_post_stream(
        self, conn: HttpConnection, request_id: RequestId
    ) -> SSEDecoder | None:
        """Read a POST's SSE answer; return its decoder when the stream must be resumed."""
        decoder = self.new_decoder()
        try:
            answered = await self.pump(conn, decoder, request_id)
        except HttpTransportError:
            if not decoder.last_event_id:
                raise
            return decoder
        except RemoteProtocolError as exc:
            error = ErrorObject(code=INTERNAL_ERROR, message=f"malformed SSE stream: {exc}")
            await self.channel.fail(request_id, error)
            return None
        if answered or not self.channel.waiting(request_id):
            return None
        if decoder.last_event_id:
            return decoder
        message = f"the server ended the SSE stream of request {request_id!r} without an answer"
        await self.channel.fail(
            request_id,
            connection_closed_error(message),
        )
        return None

    # ------------------------------------------------------------------ GET
    async def _get_once(self, decoder: SSEDecoder, until: RequestId | None) -> Outcome:
        channel = self.channel
        gate = channel.gate
        base = [("Accept", "text/event-stream"), ("Cache-Control", "no-cache")]
        if decoder.last_event_id:
            base.append(("Last-Event-ID", decoder.last_event_id))
        sent = channel.session_id
        info = HttpRequestInfo("GET", self.config.url, None)
        for retries_left in range(self.config.max_auth_retries, -1, -1):
            headers = await channel.headers("GET", None, base)
            challenge = await self._get_attempts(decoder, until, headers, sent)
            if not isinstance(challenge, Challenge):
                return challenge
            assert gate is not None
            verdict = await gate.answer(info, gate.sent(headers), challenge, retries_left)
            if verdict is not RETRY:
                logger.info(
                    "GET stream: authorization refused (HTTP %d)", challenge.response.status
                )
                if until is None:
                    channel.listen_opened()
                return Outcome.STOP
        raise AssertionError("unreachable")  # pragma: no cover

    async def _get_attempts(
        self,
        decoder: SSEDecoder,
        until: RequestId | None,
        headers: list[tuple[str, str]],
        sent: str | None,
    ) -> Outcome | Challenge:
        """One GET (again on a fresh connection if a kept one was stale)."""
        channel = self.channel
        gate = channel.gate
        info = HttpRequestInfo("GET", self.config.url, None)
        for attempt in (0, 1):
            self.get_requests += 1
            try:
                async with channel.pool.checkout(fresh=attempt > 0) as conn:
                    await conn.send_request("GET", channel.pool.origin, headers, None)
                    response = await conn.receive_response()
                    if gate is not None:
                        if gate.is_challenge(response):
                            return await gate.read(conn, response)
                        gate.observe(info, response)
                    if until is None:
                        channel.listen_opened()
                    outcome = self._judge(response.status_code, response, sent)
                    if outcome is not None:
                        return outcome
                    answered = await self.pump(conn, decoder, until)
                    return Outcome.DONE if answered else Outcome.ENDED
            except HttpTransportError as exc:
                if exc.stale and attempt == 0:
                    continue
                self.last_error = str(exc)
                if until is None:
                    channel.listen_opened()
                return Outcome.NETWORK
            except RemoteProtocolError as exc:
                logger.warning("malformed SSE on the GET stream: %s", exc)
                return Outcome.STOP
        raise AssertionError("unreachable")  # pragma: no cover

    def _judge(self, status: int, response: h11.Response, sent: str | None) -> Outcome | None:
        """What a GET (sent with session ``sent``) got; ``None``: an SSE stream to read."""
        channel = self.channel
        if status == 404 and sent is not None:
            self.lost_session = sent
            channel.renewal.begin(sent)
            return Outcome.EXPIRED
        if status == 405:
            logger.debug("the server offers no GET stream (405)")
            return Outcome.STOP
        if status == 429 or status >= 500:
            logger.info("GET stream: HTTP %d, will retry", status)
            return Outcome.ENDED
        if not 200 <= status < 300 or content_type(response) != "text/event-stream":
            logger.info("GET stream declined: HTTP %d", status)
            return Outcome.STOP
        return None

    async def follow(self, decoder: SSEDecoder, until: RequestId | None, delay: float) -> Outcome:
        """GET (and reconnect) until ``until`` is answered, or the server stops us."""
        misses = 0
        while True:
            if delay > 0:
                await trio.sleep(delay)
            before = decoder.last_event_id
            outcome = await self._get_once(decoder, until)
            if outcome in (Outcome.DONE, Outcome.STOP, Outcome.EXPIRED):
                return outcome
            if until is not None and not self.channel.waiting(until):
                return Outcome.DONE
            misses = 0 if decoder.last_event_id != before else misses + 1
            if misses >= self.config.max_reconnects:
                logger.info("giving up the SSE stream after %d attempts without progress", misses)
                return outcome
            delay = self.delay(decoder.retry, misses)

    async def resume(self, request_id: RequestId, decoder: SSEDecoder) -> None:
        """Resume a POST stream that ended before its answer (see the module doc)."""
        outcome = await self.follow(decoder, request_id, self.delay(decoder.retry, 1))
        if not self.channel.waiting(request_id):
            return
        if outcome is Outcome.NETWORK:
            self.channel.break_channel(f"lost the connection to the server: {self.last_error}")
            return
        if outcome is Outcome.EXPIRED:
            await self.channel.fail(request_id, session_expired_error(self.lost_session))
            return
        message = f"the SSE stream of request {request_id!r} was lost and could not be resumed"
        await self.channel.fail(
            request_id,
            connection_closed_error(message),
        )

    async def listen(self) -> None:
        """The standalone GET stream, for as long as the channel lives."""
        try:
            outcome = await self.follow(self.new_decoder(), None, 0)
            logger.debug("the GET stream ended: %s", outcome.value)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return
        except Exception:
            logger.exception("the GET stream failed")

"""What the answer to one POST means: a session id taken, a 404 bounced or ending the
session, an error status failing its request (or the fall-back to HTTP+SSE), a JSON
body delivered, an SSE stream handed to its reader (a mixin of
:class:`~._client_channel.HttpClientChannel`; see its module doc)."""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import h11

from trimcp.wire import (
    INTERNAL_ERROR,
    ErrorObject,
    Message,
    Notification,
    RemoteProtocolError,
    Request,
    RequestId,
    SSEDecoder,
    decode,
)

from ._client_calls import describe
from ._client_conn import HttpConnection, ResponseTooLarge, content_type
from ._client_errors import http_error, phrase
from ._client_legacy import FALLBACK_STATUSES, LegacySse
from ._client_sse import SseReader

if TYPE_CHECKING:
    from ._client import StreamableHttp

__all__ = ["ERROR_BODY_LIMIT", "Bounce", "PostAnswers"]

logger = logging.getLogger("trimcp.http.client")

#: The most of an error (or otherwise unread) body read before the connection is reused.
ERROR_BODY_LIMIT = 64 * 1024


class Bounce(enum.Enum):
    """A POST answered 404 for its session: start a new one, then re-send. Or the first
    ``initialize`` was refused the way a 2024-11-05 server does: try HTTP+SSE."""

    BOUNCED = "bounced"
    LEGACY = "legacy"


class PostAnswers:
    """The answer half of :class:`~._client_channel.HttpClientChannel` (a mixin)."""

    # Provided by HttpClientChannel.
    config: StreamableHttp
    legacy: LegacySse
    sse: SseReader
    _refusal: ErrorObject | None

    take_session_id: Callable[[h11.Response], None]
    expire: Callable[..., None]
    start_listening: Callable[[], None]
    waiting: Callable[[RequestId], bool]
    fail: Callable[[RequestId, ErrorObject], Coroutine[Any, Any, None]]
    deliver: Callable[[Message | list[Message]], Coroutine[Any, Any, None]]

    async def _on_response(
        self,
        message: Message,
        conn: HttpConnection,
        response: h11.Response,
        sent: str | None,
        bounce: bool,
    ) -> SSEDecoder | Bounce | None:
        """Handle the answer to one POST; return a decoder when its stream needs resuming.

        A 404 for session ``sent`` returns ``BOUNCED`` when ``bounce`` allows a new session.
        """
        status = response.status_code
        request_id = message.id if isinstance(message, Request) else None
        initialize = isinstance(message, Request) and message.method == "initialize"
        if initialize and 200 <= status < 300:
            self.take_session_id(response)
        if status == 404 and sent is not None and not initialize:
            if not bounce:
                self.expire(sent)
                return None
            with contextlib.suppress(ResponseTooLarge):
                await conn.read_body(ERROR_BODY_LIMIT)
            return Bounce.BOUNCED
        if not 200 <= status < 300:
            return await self._refused(message, conn, response, sent)
        if request_id is None or status == 202:
            with contextlib.suppress(ResponseTooLarge):  # nothing to read; not reused then
                await conn.read_body(self.config.max_message_size)
            if isinstance(message, Notification) and message.method == "notifications/initialized":
                self.start_listening()
            return None
        kind = content_type(response)
        del response  # nothing more is read from the head; the body may take long
        if kind == "text/event-stream":
            return await self.sse.read_post_stream(conn, request_id)
        if kind == "application/json":
            try:
                body = await conn.read_body(self.config.max_message_size)
            except ResponseTooLarge as exc:
                await self.fail(request_id, ErrorObject(code=INTERNAL_ERROR, message=str(exc)))
                return None
            await self._on_json(body, request_id)
            return None
        await self.fail(
            request_id,
            ErrorObject(
                code=INTERNAL_ERROR, message=f"unexpected Content-Type {kind!r} in the answer"
            ),
        )
        return None

    async def _refused(
        self, message: Message, conn: HttpConnection, response: h11.Response, sent: str | None
    ) -> Bounce | None:
        """An error status: fail the request (or log), or fall back to HTTP+SSE when the
        first ``initialize`` met a 2024-11-05 server (``_client_legacy``)."""
        status = response.status_code
        try:
            body = await conn.read_body(ERROR_BODY_LIMIT)
        except ResponseTooLarge:
            body = b""
        reason = response.reason.decode("latin-1", "replace") or phrase(status)
        if not isinstance(message, Request):
            logger.warning("the server refused a %s with HTTP %d", describe(message), status)
            return None
        first_initialize = message.method == "initialize" and sent is None
        if (
            first_initialize
            and status in FALLBACK_STATUSES
            and self.config.legacy_sse == "fallback"
            and not self.legacy.active
        ):
            self._refusal = http_error(status, reason, body)
            return Bounce.LEGACY
        await self.fail(message.id, http_error(status, reason, body))
        return None

    async def _on_json(self, body: bytes, request_id: RequestId) -> None:
        try:
            messages = decode(body, allow_batch=True)
        except RemoteProtocolError as exc:
            error = ErrorObject(code=INTERNAL_ERROR, message=f"invalid JSON-RPC answer: {exc}")
            await self.fail(request_id, error)
            return
        await self.deliver(messages)
        if self.waiting(request_id):
            error = ErrorObject(code=INTERNAL_ERROR, message="the JSON answer was for another id")
            await self.fail(request_id, error)

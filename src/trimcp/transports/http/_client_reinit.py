"""Starting a new session when the server forgot ours (HTTP 404 on a session request).

The MCP spec (Streamable HTTP, session management) says a client that gets 404 for a
request carrying ``Mcp-Session-Id`` must start a new session with a fresh
``initialize``. :class:`Renewal` does that under the session above the channel, which
never sees it:

* It remembers the params of the first ``initialize`` the session sent, and re-sends them
  (without a session id) under a channel-private string id, ``trimcp-reinitialize-<n>``,
  which cannot collide with the session's integer ids. The answer is read here and never
  reaches the session.
* The server must choose the revision negotiated the first time: the session has already
  set itself up for that one, so any other answer fails the channel as a plain 404 does.
* ``notifications/initialized`` follows; then the GET stream is reopened if it was open.
* Requests still in flight on the old session lost their streams: each fails with an
  :class:`~trimcp.McpError` saying the session expired (it may or may not have run). The
  request that got the 404 was not processed and is re-sent once by the channel.

It is bounded: at most ``max_reinitializations`` (3) per minute, so a server that forgets
every session at once cannot make the client loop, and each handshake has 30 s. Requests
sent meanwhile wait for it, then go to the new session. Past the bound, with
``reinitialize=False``, or when the handshake fails, the channel ends as it always did on
404 (every waiting call fails with :class:`~trimcp.ConnectionClosedError`).
"""

from __future__ import annotations

import copy
import logging
from collections import deque
from typing import TYPE_CHECKING, Any, final

import h11
import trio

from trimcp.wire import (
    INTERNAL_ERROR,
    ErrorObject,
    Message,
    Notification,
    RemoteProtocolError,
    Request,
    RequestId,
    Response,
    SSEDecoder,
    decode,
    encode,
)

from ._client_conn import HttpTransportError, ResponseTooLarge, content_type

if TYPE_CHECKING:
    from ._client_channel import HttpClientChannel

__all__ = ["Renewal", "session_expired_error"]

logger = logging.getLogger("trimcp.http.client")

_WINDOW = 60.0
_HANDSHAKE_TIMEOUT = 30.0
_BODY_LIMIT = 64 * 1024
_BASE = (
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
)


class _HandshakeFailed(Exception):
    """The new ``initialize`` exchange did not give a usable session."""


def session_expired_error(session_id: str | None) -> ErrorObject:
    """The error of a request that was in flight when its session expired."""
    return ErrorObject(
        code=INTERNAL_ERROR,
        message=(
            f"session {session_id} expired (the server answered HTTP 404) while this "
            "request was in flight; it may or may not have run"
        ),
        data={"httpStatus": 404, "sessionExpired": True},
    )


@final
class Renewal:
    """The re-initialization of one :class:`HttpClientChannel` (see the module doc)."""

    def __init__(self, channel: HttpClientChannel) -> None:
        self.channel = channel
        self._params: dict[str, Any] | None = None
        self._times: deque[float] = deque()
        self._settled: trio.Event | None = None
        #: Successful re-initializations so far (for tests and diagnostics).
        self.count = 0
        self._attempts = 0

    def remember(self, message: Message) -> None:
        """Keep the params of the session's first ``initialize``."""
        if not isinstance(message, Request) or self._params is not None:
            return
        if message.method == "initialize" and isinstance(message.params, dict):
            self._params = copy.deepcopy(message.params)

    async def settled(self) -> None:
        """Wait while a re-initialization runs (requests then go to the new session)."""
        if self._settled is not None:
            await self._settled.wait()

    def _budget(self) -> bool:
        now = trio.current_time()
        while self._times and now - self._times[0] >= _WINDOW:
            self._times.popleft()
        if len(self._times) >= self.channel.config.max_reinitializations:
            return False
        self._times.append(now)
        return True

    def begin(self, old: str) -> None:
        """Start replacing session ``old`` after a 404 (or end the channel, as before).

        Nothing happens when ``old`` is no longer the session or a replacement already
        runs. The work runs as a task of the channel, so a caller that gives up (its
        request timed out or was cancelled) cannot cut a handshake short.
        """
        channel = self.channel
        if self._settled is not None or channel.failure is not None or channel.session_id != old:
            return
        config = channel.config
        if not config.reinitialize or self._params is None or not self._budget():
            if config.reinitialize and self._params is not None:
                logger.warning(
                    "not starting another session: %d already in the last minute",
                    config.max_reinitializations,
                )
            channel.expire(old)
            return
        self._settled = trio.Event()
        channel.spawn(self._replace, old, self._settled)

    async def renew(self, old: str) -> bool:
        """Replace session ``old`` and wait; False when the channel ended instead."""
        self.begin(old)
        await self.settled()
        return self.channel.failure is None and self.channel.session_id != old

    async def _replace(self, old: str, settled: trio.Event) -> None:
        channel = self.channel
        try:
            reopen = await channel.forget_session(old)
            with trio.fail_after(_HANDSHAKE_TIMEOUT):
                await self._handshake()
        except Exception as exc:  # the channel ends, as on any 404 it cannot cure
            logger.warning("starting a new session after HTTP 404 failed: %r", exc)
            channel.expire(old)
        else:
            self.count += 1
            logger.info("session %s expired; continuing on session %s", old, channel.session_id)
            if reopen:
                channel.start_listening()
        finally:
            self._settled = None
            settled.set()

    async def _handshake(self) -> None:
        channel = self.channel
        assert self._params is not None
        expected = channel.protocol_version or self._params.get("protocolVersion")
        self._attempts += 1
        request = Request(
            id=f"trimcp-reinitialize-{self._attempts}", method="initialize", params=self._params
        )
        response, answer = await self._post(request)
        if not 200 <= response.status_code < 300:
            raise _HandshakeFailed(f"initialize: HTTP {response.status_code}")
        if not isinstance(answer, Response) or not isinstance(answer.result, dict):
            raise _HandshakeFailed("initialize was not answered with a result")
        version = answer.result.get("protocolVersion")
        if version != expected:
            raise _HandshakeFailed(
                f"the server chose protocol version {version!r} instead of {expected!r}"
            )
        channel.take_session_id(response)
        done, _ = await self._post(Notification(method="notifications/initialized", params=None))
        if not 200 <= done.status_code < 300:
            raise _HandshakeFailed(f"notifications/initialized: HTTP {done.status_code}")

    async def _post(self, message: Message) -> tuple[h11.Response, Message | None]:
        """POST one handshake message; return the response head and the answer to it."""
        channel = self.channel
        headers = await channel.headers("POST", message, _BASE)
        for attempt in (0, 1):
            try:
                async with channel.pool.checkout(fresh=attempt > 0) as conn:
                    await conn.send_request("POST", channel.pool.origin, headers, encode(message))
                    response = await conn.receive_response()
                    status = response.status_code
                    if not isinstance(message, Request) or not 200 <= status < 300:
                        await conn.read_body(_BODY_LIMIT)
                        return response, None
                    limit = channel.config.max_message_size
                    if content_type(response) == "application/json":
                        return response, _answer(
                            decode(await conn.read_body(limit), allow_batch=True), message.id
                        )
                    if content_type(response) != "text/event-stream":
                        raise _HandshakeFailed("initialize answered with an unexpected type")
                    decoder = SSEDecoder(max_event_size=limit)
                    while (chunk := await conn.receive_chunk()) is not None:
                        for event in decoder.feed(chunk):
                            if event.event != "message":
                                continue
                            if (
                                found := _answer(decode(event.data, allow_batch=True), message.id)
                            ) is not None:
                                return response, found
                    return response, None
            except HttpTransportError as exc:
                if exc.stale and attempt == 0:
                    continue
                raise
            except (ResponseTooLarge, RemoteProtocolError, ValueError) as exc:
                raise _HandshakeFailed(str(exc)) from exc
        raise AssertionError("unreachable")  # pragma: no cover


def _answer(message: Message | list[Message], request_id: RequestId) -> Message | None:
    for one in message if isinstance(message, list) else [message]:
        if not isinstance(one, Request | Notification) and one.id == request_id:
            return one
        logger.debug("ignoring a message during re-initialization: %r", one)
    return None

"""The POST half of the Streamable HTTP app: deliver a POST's messages, answer it.

:func:`serve_post` is the same for every POST that reaches a session (handshake era,
``stateless=True`` mode, or a stateless-era POST with a session of its own): the
requests get an outbox on the channel, their messages are delivered (each bounded by
``inbound_wait``, then 503), and the outbox is pumped back as JSON or SSE until the
answers are out or the client leaves. The app decides which session a POST belongs to
and what happens to the session afterwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, Protocol

import trio

from trimcp.nursery import Caller
from trimcp.wire import Message, Notification, Request, RequestId

from ._asgi_io import (
    Receive,
    Send,
    batch_error_body,
    pump,
    send_empty,
    send_error,
    send_sse_end,
)
from ._guards import SERVER_ERROR, Headers, HttpError
from ._server_limits import HttpServerLimits
from ._sessions import HttpSessionChannel
from ._shared import StoreUnavailable, unavailable

__all__ = [
    "SESSION_NOT_FOUND",
    "deliver",
    "deliver_here",
    "deliver_within",
    "serve_post",
    "session_headers",
    "shutting_down",
]

SESSION_NOT_FOUND: Final = -32001


def session_headers(channel: HttpSessionChannel) -> list[tuple[bytes, bytes]]:
    """``Mcp-Session-Id`` for a session that has one, else nothing."""
    if channel.session_id is None:
        return []
    return [(b"mcp-session-id", channel.session_id.encode())]


async def serve_post(
    channel: HttpSessionChannel,
    messages: list[Message],
    requests: list[Request],
    receive: Receive,
    send: Send,
    limits: HttpServerLimits,
    status: Callable[[int], int] | None = None,
    draining: Callable[[], bool] | None = None,
    terminate: Callable[[HttpSessionChannel], object] | None = None,
    caller: Caller | None = None,
    headers: Headers | None = None,
) -> None:
    """Deliver one POST's messages to ``channel`` and answer it: 202 when it holds no
    request, else the requests' outbox pumped as JSON or SSE (``status`` maps a JSON
    error body's code to its HTTP status, for the stateless era). A session that ends
    before any output gives 404, or 503 while ``draining`` (a server shutting down).
    A channel without a session id (a session for this POST) is given to
    ``terminate`` at the end (which may keep it for the next, see
    :meth:`~._sessions_manager.SessionManager.recycle`). ``caller`` is who sent the
    requests (with authorization), for their handlers; the POST's ``headers`` stay
    readable by them too (``channel.request_headers``)."""
    channel.busy += 1
    try:
        if not requests:
            for message in messages:
                waiting = deliver(channel, message, limits.inbound_wait)
                if waiting is not None:
                    await waiting
            await send_empty(send, 202, session_headers(channel))
            return
        ids = [r.id for r in requests]
        _check_ids(channel, ids)
        outbox = channel.open_request_stream(
            requests, batch=len(messages) > 1, caller=caller, headers=headers
        )
        for n, message in enumerate(messages):
            try:
                waiting = deliver(channel, message, limits.inbound_wait)
                if waiting is not None:
                    await waiting
            except HttpError:
                for late in messages[n:]:
                    if isinstance(late, Request):
                        channel.cancelled(late.id)
                channel.detach(outbox)
                raise
        response_headers = session_headers(channel)
        try:
            written = await pump(
                outbox,
                receive,
                send,
                response_headers,
                timeout=limits.send_timeout,
                leave_empty=True,
                status=status,
                eager=channel.eager,
            )
        finally:
            channel.detach(outbox)
        if written is None:
            await _answer_empty(channel, ids, send, response_headers, limits, draining)
    finally:
        channel.busy -= 1
        channel.touch()
        if terminate is not None and channel.session_id is None:
            terminate(channel)


def _check_ids(channel: HttpSessionChannel, ids: list[RequestId]) -> None:
    """400 for a POST repeating an id, or naming one still in flight."""
    if len(set(ids)) != len(ids):
        raise HttpError(400, "Invalid Request: a request with this id is already in flight")
    for request_id in ids:  # a loop, not a generator: no call per id
        if channel.in_flight(request_id):
            raise HttpError(400, "Invalid Request: a request with this id is already in flight")


async def _answer_empty(
    channel: HttpSessionChannel,
    ids: list[RequestId],
    send: Send,
    headers: list[tuple[bytes, bytes]],
    limits: HttpServerLimits,
    draining: Callable[[], bool] | None,
) -> None:
    """The answer of a POST whose requests ended with no output: an empty stream when
    the client cancelled them, else the error of the session's end, which names the
    request (one error per request for a batch)."""
    if not channel.closed:  # cancelled before any output: an empty stream
        await send_sse_end(send, headers)
        return
    if draining is not None and draining():
        error = shutting_down(limits)
    else:
        error = HttpError(404, "Not Found: the session ended", code=SESSION_NOT_FOUND)
    if len(ids) == 1:
        error.id = channel.wire_ids.get(ids[0], ids[0])
    else:
        error.body = batch_error_body(error, ids)
    await send_error(send, error, headers)


def shutting_down(limits: HttpServerLimits) -> HttpError:
    """The refusal of a server that is shutting down: 503 with ``Retry-After``."""
    return HttpError(
        503,
        "Service Unavailable: the server is shutting down",
        code=SERVER_ERROR,
        headers=[(b"retry-after", str(limits.retry_after).encode())],
    )


class _Inbox(Protocol):
    async def deliver(self, message: Message) -> None: ...


async def deliver_within(channel: _Inbox, message: Message, wait: float) -> None:
    """Hand ``message`` to a session within ``wait`` seconds: 404 once the session has
    ended, 503 (``Retry-After: 1``) while it stays too busy to take it. A queue with
    room takes it at once, with no deadline to set up (the common case)."""
    deliver_nowait = getattr(channel, "deliver_nowait", None)
    if deliver_nowait is None or not _queued_at_once(deliver_nowait, message):
        await _deliver_waiting(channel.deliver, message, wait)


def _queued_at_once(deliver_nowait: Callable[[Message], None], message: Message) -> bool:
    """Whether the session's queue took ``message`` at once; 404 once it has ended."""
    try:
        deliver_nowait(message)
    except trio.WouldBlock:
        return False
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        raise _session_ended() from None
    return True


def _session_ended() -> HttpError:
    return HttpError(404, "Not Found: the session ended", code=SESSION_NOT_FOUND)


async def _deliver_waiting(
    send: Callable[[Message], Awaitable[None]],
    message: Message,
    wait: float,
    noted: HttpSessionChannel | None = None,
) -> None:
    """:func:`deliver_within` once the queue had no room: ``send`` it when there is,
    within ``wait`` seconds (503 after). ``send`` the raw queue's: the message is then
    ``noted`` as delivered to that channel here."""
    try:
        with trio.CancelScope(relative_deadline=wait) as waited:
            await send(message)
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        raise _session_ended() from None
    if waited.cancelled_caught:
        raise HttpError(
            503,
            "Service Unavailable: the session is busy",
            code=SERVER_ERROR,
            headers=[(b"retry-after", b"1")],
        )
    if noted is not None:
        _note_waited(noted, message)


def deliver(channel: HttpSessionChannel, message: Message, wait: float) -> Awaitable[None] | None:
    """Queue ``message`` for the session (:func:`deliver_within`), and let the channel
    stop the stream of a request the client cancelled. In a shared store, a message
    for another process is relayed there instead (:mod:`._shared_channel`).

    ``None`` when it was queued at once (a queue with room, no shared store: the
    common case, with no coroutine to run); else the awaitable that delivers it."""
    if channel.shared is None:
        if not _queued_at_once(channel.deliver_nowait, message):
            # The queue's own send, not the channel's deliver, and no coroutine of its
            # own around it: a waiting POST resumes through two frames less.
            return _deliver_waiting(channel.inbound_send.send, message, wait, noted=channel)
        if isinstance(message, Notification):
            _delivered(channel, message)
        return None
    return _relay_or_deliver(channel, message, wait)


async def _relay_or_deliver(channel: HttpSessionChannel, message: Message, wait: float) -> None:
    shared = channel.shared
    assert shared is not None
    try:
        if await shared.route(message):
            return
    except StoreUnavailable:
        raise unavailable(shared.sessions.retry_after) from None
    await deliver_here(channel, message, wait)


async def deliver_here(channel: HttpSessionChannel, message: Message, wait: float) -> None:
    """:func:`deliver` to this process's session (no relaying)."""
    await deliver_within(channel, message, wait)
    _delivered(channel, message)


def _note_waited(channel: HttpSessionChannel, message: Message) -> None:
    """``message``, put on ``channel``'s raw queue after a wait, is delivered."""
    channel.delivered(message)
    _delivered(channel, message)


def _delivered(channel: HttpSessionChannel, message: Message) -> None:
    if isinstance(message, Notification) and message.method == "notifications/cancelled":
        channel.cancelled((message.params or {}).get("requestId"))

"""ASGI plumbing: reading a bounded body, plain responses, and draining an outbox.

Every ``send`` to the ASGI server goes through :func:`_send`, which turns any failure
of a vanished client into :class:`ClientGone`: writing to a closed connection must
never raise out of the app (CVE-2025-53365 class).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from typing import Any

import trio

from trimcp.wire import RequestId

from ._eager import EAGER_ROUNDS, EagerLot
from ._guards import HttpError
from ._inbound import BodyReservation
from ._sse_stream import Outbox

__all__ = [
    "BODY_BUFFERED",
    "EAGER_ROUNDS",
    "ClientGone",
    "Receive",
    "Send",
    "batch_error_body",
    "pump",
    "read_body",
    "send_empty",
    "send_error",
    "send_json",
    "send_sse_end",
    "whole_body",
]

logger = logging.getLogger("trimcp.http.server")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
RawHeaders = Sequence[tuple[bytes, bytes]]


#: An ASGI scope extension: the server read the whole body with the head, so the first
#: ``receive`` returns all of it at once (trimcp's h11 engine says so).
BODY_BUFFERED = "trimcp.body.buffered"


class ClientGone(Exception):
    """The client disconnected; nothing more can be sent on this request."""


async def _send(send: Send, timeout: float, *messages: MutableMapping[str, Any]) -> None:
    """Send ``messages`` in order, all within one ``timeout`` (one deadline per
    response part rather than per message: a cancel scope is not free on the hot path).
    A server that bounds its writes itself (trimcp's h11 engine: its ``send`` belongs
    to an object whose ``bounds_writes`` is true) gets no deadline here at all."""
    try:
        if getattr(getattr(send, "__self__", None), "bounds_writes", False):
            for message in messages:
                await send(message)
            return
        with trio.fail_after(timeout):
            for message in messages:
                await send(message)
    except trio.Cancelled:
        raise
    except trio.TooSlowError as exc:
        raise ClientGone("the client is not reading") from exc
    except Exception as exc:  # the server's own error type for a gone client varies
        raise ClientGone(str(exc)) from exc


def whole_body(message: MutableMapping[str, Any], limit: int) -> bytes | None:
    """The body of a first ``receive`` that holds all of it; ``None`` when more is to
    come. :class:`ClientGone` for a disconnect, 413 past ``limit`` bytes."""
    if message["type"] == "http.disconnect":
        raise ClientGone("disconnected while sending the body")
    if message.get("more_body", False):
        return None
    body: bytes = message.get("body", b"")
    if len(body) > limit:
        raise HttpError(413, "Payload Too Large", close=True)
    return body


async def read_body(
    receive: Receive,
    *,
    limit: int,
    timeout: float,
    reservation: BodyReservation | None = None,
    first: MutableMapping[str, Any] | None = None,
) -> bytes:
    """The whole request body: 413 past ``limit`` bytes, 408 past ``timeout`` seconds,
    503 when ``reservation`` (the inbound budget, :mod:`._inbound`) cannot hold it.
    ``first``: its first message, already received by the caller.

    A body the server read with the head (:data:`BODY_BUFFERED`) is taken by the caller
    with one receive and :func:`whole_body` (no deadline: that receive cannot wait).
    """
    pending = [] if first is None else [first]
    chunks: list[bytes] = []
    size = 0
    with trio.move_on_after(timeout) as deadline:
        while True:
            message = pending.pop() if pending else await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone("disconnected while sending the body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise HttpError(413, "Payload Too Large", close=True)
            if reservation is not None:
                reservation.take(len(chunk))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
    assert deadline.cancelled_caught
    raise HttpError(408, "Request Timeout: the body took too long", close=True)


async def send_json(
    send: Send,
    status: int,
    body: bytes,
    headers: RawHeaders = (),
    *,
    timeout: float = 30.0,
) -> None:
    await _send(
        send,
        timeout,
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        },
        {"type": "http.response.body", "body": body},
    )


async def send_empty(
    send: Send, status: int, headers: RawHeaders = (), *, timeout: float = 30.0
) -> None:
    await _send(
        send,
        timeout,
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", b"0"), *headers],
        },
        {"type": "http.response.body", "body": b""},
    )


def error_body(error: HttpError) -> bytes:
    if error.body is not None:
        return error.body
    return _dumps(_error_response(error, error.id))


def batch_error_body(error: HttpError, ids: Iterable[RequestId]) -> bytes:
    """``error`` as the answer to each request of a batch: one error response per id."""
    return _dumps([_error_response(error, request_id) for request_id in ids])


def _error_response(error: HttpError, request_id: RequestId | None) -> dict[str, Any]:
    detail: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        detail["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": detail}


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


async def send_error(send: Send, error: HttpError, extra: RawHeaders = ()) -> None:
    """The JSON-RPC error body of ``error`` with its status (and ``Connection: close``)."""
    headers = [*error.headers, *extra]
    if error.close:
        headers.append((b"connection", b"close"))
    await send_json(send, error.status, error_body(error), headers)


async def pump(
    outbox: Outbox,
    receive: Receive,
    send: Send,
    headers: RawHeaders,
    *,
    timeout: float,
    leave_empty: bool = False,
    status: Callable[[int], int] | None = None,
    eager: EagerLot | None = None,
) -> bool | None:
    """Write ``outbox`` as the response: one JSON body, or an SSE stream.

    Returns ``True`` when the response was completed, ``False`` when the client went
    away first. While it waits for the outbox, the same task watches ``receive`` for the
    client leaving: the outbox's waker cancels that read when an item comes, so a parked
    response keeps no second task, and no frame below this one but the server's
    ``receive``. Since watching registers a read with the OS, a response first waits up
    to :data:`EAGER_ROUNDS` scheduler rounds, and a JSON answer ready by then is written
    without watching at all (disconnection is noticed that much later); an SSE stream
    waits for a second item as well, since its first is often the priming event. With
    ``eager`` (the app's :class:`~._eager.EagerLot`, while it runs) the response parks
    for those rounds and is resumed once, by its first item; without, it polls. Each
    SSE body carries everything queued when it is sent, and one after which the outbox
    is closed and empty ends the response: a tool answering at once costs one body
    (one write on the h11 engine, one send under hypercorn) instead of three or four.
    With ``leave_empty``, a response that ends before its first item is left unwritten
    and ``None`` returned, for the caller to answer (without, it is an empty stream).
    ``status`` maps the code of a JSON error body to its HTTP status (the stateless
    era answers its request errors with 400 or 404); without it every body is 200.
    """
    # A JSON body is the one item; an SSE stream's first item is often its priming
    # event, so it waits for a second one too: written together (see below).
    # (An SSE stream parked in ``eager`` may wait its rounds once per item.)
    waiting = outbox.count < (1 if outbox.json else 2) and not outbox.closed
    if waiting and (eager is None or not await eager.wait(outbox)):
        await _poll(outbox)
    started = False
    try:
        while True:
            while not outbox.count and not outbox.closed:
                with trio.CancelScope() as wake:
                    outbox.waker = wake.cancel
                    try:
                        message = await receive()
                    finally:
                        outbox.waker = None
                if not wake.cancelled_caught and message["type"] == "http.disconnect":
                    raise ClientGone("the client went away")
            item = await outbox.get()
            if not started:
                if item is None and leave_empty:
                    return None
                if item is not None and outbox.json:
                    await _send_json_answer(send, outbox, item[1], headers, status, timeout)
                    return True
                await _send(send, timeout, _sse_start(headers))
                started = True
            if item is None:
                break
            body, last = _sse_body(outbox, item[1])
            await _send(send, timeout, body)
            if last:
                outbox.written()  # the budget has those bytes back
                return True
        await _send(send, timeout, {"type": "http.response.body", "body": b"", "more_body": False})
    except ClientGone:
        logger.debug("client went away during the response")
        return False
    return True


async def _poll(outbox: Outbox) -> None:
    """Wait up to :data:`EAGER_ROUNDS` scheduler rounds until ``outbox`` holds what a
    response starts with (one item for JSON, two for SSE) or ends, checking each round
    (without an :class:`~._eager.EagerLot` to park in)."""
    for _ in range(EAGER_ROUNDS):
        # A round without the cancellation check (bounded: the watch or the write that
        # follows is a checkpoint), which costs a few calls more each round.
        await trio.lowlevel.cancel_shielded_checkpoint()
        if outbox.count >= (1 if outbox.json else 2) or outbox.closed:
            return


def _error_status(body: bytes, status: Callable[[int], int]) -> int:
    """The status of a JSON body: ``status(code)`` for an error answer, else 200."""
    if b'"error"' not in body:
        return 200
    try:
        error = json.loads(body).get("error")
        code = error.get("code") if isinstance(error, dict) else None
    except (ValueError, AttributeError):
        return 200
    return status(code) if isinstance(code, int) else 200


async def _send_json_answer(
    send: Send,
    outbox: Outbox,
    body: bytes,
    headers: RawHeaders,
    status: Callable[[int], int] | None,
    timeout: float,
) -> None:
    """``body`` as the JSON response, with the status and headers the outbox asks for."""
    code = 200 if status is None else _error_status(body, status)
    if outbox.reply_status is not None:
        code, extra = outbox.reply_status
        headers = [*headers, *extra]
    await send_json(send, code, body, headers, timeout=timeout)


def _sse_body(outbox: Outbox, first: bytes) -> tuple[dict[str, Any], bool]:
    """``first`` and whatever else is queued now, as one body, and whether it ends the
    response (the outbox is closed and empty after it): an answer ready at once is one
    send, and one write, instead of one per event and one more for the end."""
    data = first + outbox.take_queued() if outbox.count else first
    last = outbox.closed and not outbox.count
    return {"type": "http.response.body", "body": data, "more_body": not last}, last


def _sse_start(headers: RawHeaders) -> dict[str, Any]:
    return {
        "type": "http.response.start",
        "status": 200,
        "headers": [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
            *headers,
        ],
    }


async def send_sse_end(send: Send, headers: RawHeaders, *, timeout: float = 30.0) -> None:
    """An SSE response with no events (a request cancelled before any output)."""
    await _send(send, timeout, _sse_start(headers), {"type": "http.response.body", "body": b""})

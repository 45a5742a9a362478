"""ASGI plumbing: reading a bounded body, plain responses, and draining an outbox.

Every ``send`` to the ASGI server goes through :func:`_send`, which turns any failure
of a vanished client into :class:`ClientGone`: writing to a closed connection must
never raise out of the app (CVE-2025-53365 class).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import trio

from ._guards import HttpError
from ._sse_stream import Outbox

__all__ = [
    "ClientGone",
    "Receive",
    "Send",
    "pump",
    "read_body",
    "send_empty",
    "send_error",
    "send_json",
    "send_sse_end",
]

logger = logging.getLogger("trimcp.http.server")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
RawHeaders = Sequence[tuple[bytes, bytes]]


class ClientGone(Exception):
    """The client disconnected; nothing more can be sent on this request."""


async def _send(send: Send, message: MutableMapping[str, Any], timeout: float) -> None:
    try:
        with trio.fail_after(timeout):
            await send(message)
    except trio.Cancelled:
        raise
    except trio.TooSlowError as exc:
        raise ClientGone("the client is not reading") from exc
    except Exception as exc:  # the server's own error type for a gone client varies
        raise ClientGone(str(exc)) from exc


async def read_body(receive: Receive, *, limit: int, timeout: float) -> bytes:
    """The whole request body: 413 past ``limit`` bytes, 408 past ``timeout`` seconds."""
    chunks: list[bytes] = []
    size = 0
    with trio.move_on_after(timeout) as deadline:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone("disconnected while sending the body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise HttpError(413, "Payload Too Large", close=True)
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
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        },
        timeout,
    )
    await _send(send, {"type": "http.response.body", "body": body}, timeout)


async def send_empty(
    send: Send, status: int, headers: RawHeaders = (), *, timeout: float = 30.0
) -> None:
    await _send(
        send,
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", b"0"), *headers],
        },
        timeout,
    )
    await _send(send, {"type": "http.response.body", "body": b""}, timeout)


def error_body(error: HttpError) -> bytes:
    if error.body is not None:
        return error.body
    detail: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        detail["data"] = error.data
    value = {"jsonrpc": "2.0", "id": error.id, "error": detail}
    return json.dumps(value, separators=(",", ":")).encode()


async def send_error(send: Send, error: HttpError, extra: RawHeaders = ()) -> None:
    """The JSON-RPC error body of ``error`` with its status (and ``Connection: close``)."""
    headers = [*error.headers, *extra]
    if error.close:
        headers.append((b"connection", b"close"))
    await send_json(send, error.status, error_body(error), headers)


async def _watch_disconnect(receive: Receive, cancel: trio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            cancel.cancel()
            return


async def pump(
    outbox: Outbox,
    receive: Receive,
    send: Send,
    headers: RawHeaders,
    *,
    timeout: float,
    on_empty: Callable[[], Awaitable[None]] | None = None,
    status: Callable[[int], int] | None = None,
) -> bool:
    """Write ``outbox`` as the response: one JSON body, or an SSE stream.

    Returns ``True`` when the response was completed, ``False`` when the client went
    away first. ``on_empty`` answers a response that ends before its first item.
    ``status`` maps the code of a JSON error body to its HTTP status (the stateless
    era answers its request errors with 400 or 404); without it every body is 200.
    """
    completed = False
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_disconnect, receive, nursery.cancel_scope)
        try:
            await _write(outbox, send, headers, timeout, on_empty, status)
            completed = True
        except ClientGone:
            logger.debug("client went away during the response")
        nursery.cancel_scope.cancel()
    return completed


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
    await _send(send, _sse_start(headers), timeout)
    await _send(send, {"type": "http.response.body", "body": b""}, timeout)


async def _write(
    outbox: Outbox,
    send: Send,
    headers: RawHeaders,
    timeout: float,
    on_empty: Callable[[], Awaitable[None]] | None,
    status: Callable[[int], int] | None = None,
) -> None:
    first = await outbox.get()
    if first is None and on_empty is not None:
        await on_empty()
        return
    if first is not None and outbox.json:
        code = 200 if status is None else _error_status(first[1], status)
        await send_json(send, code, first[1], headers, timeout=timeout)
        return
    await _send(send, _sse_start(headers), timeout)
    item = first
    while item is not None:
        await _send(
            send, {"type": "http.response.body", "body": item[1], "more_body": True}, timeout
        )
        item = await outbox.get()
    await _send(send, {"type": "http.response.body", "body": b"", "more_body": False}, timeout)

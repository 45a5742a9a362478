"""Where an HTTP session's messages go, at the channel: the stream of a request the
client cancelled stays open until the reverse calls made on it have ended, so their
``notifications/cancelled`` reach the client (design invariant 4)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from trimcp.transports.http import HttpServerLimits
from trimcp.transports.http._sessions import HttpSessionChannel
from trimcp.transports.http._sse_stream import Outbox
from trimcp.wire import Notification, Request, Response


def _channel() -> tuple[HttpSessionChannel, Outbox]:
    channel = HttpSessionChannel("s", HttpServerLimits(), None)
    call = Request(id="call", method="tools/call", params={"name": "t"})
    return channel, channel.open_request_stream([call], batch=False)


def _drain(outbox: Outbox) -> list[Any]:
    messages = []
    for _, chunk in list(outbox._items or ()):
        text = chunk.decode()
        data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
        if data:
            messages.append(json.loads("".join(data)))
    return messages


def _cancel(request_id: object) -> Notification:
    return Notification(method="notifications/cancelled", params={"requestId": request_id})


async def test_the_stream_of_a_cancelled_call_waits_for_its_reverse_call_cancel() -> None:
    channel, outbox = _channel()
    await channel.send(Request(id=0, method="elicitation/create", params={}), related="call")
    channel.cancelled("call")
    assert not outbox.closed  # the elicitation is still open on it
    await channel.send(
        Notification(method="notifications/progress", params={"progressToken": 1, "progress": 1}),
        related="call",
    )  # the call is over: its own output is dropped
    await channel.send(_cancel(0), related="call")
    assert outbox.closed
    assert [m.get("method") for m in _drain(outbox)] == [
        "elicitation/create",
        "notifications/cancelled",
    ]
    assert channel.dropped == 1


async def test_an_answer_to_the_reverse_call_ends_the_stream_too() -> None:
    channel, outbox = _channel()
    await channel.send(Request(id=0, method="sampling/createMessage", params={}), related="call")
    channel.cancelled("call")
    assert not outbox.closed
    await channel.deliver(Response(id=0, result={}))
    assert outbox.closed
    await channel.send(_cancel(0), related="call")  # too late: nowhere to go
    assert [m.get("method") for m in _drain(outbox)] == ["sampling/createMessage"]


async def test_a_cancelled_call_makes_no_new_reverse_calls() -> None:
    channel, outbox = _channel()
    await channel.send(Request(id=0, method="roots/list", params={}), related="call")
    channel.cancelled("call")
    with pytest.raises(trio.BrokenResourceError):
        await channel.send(Request(id=1, method="roots/list", params={}), related="call")
    await channel.send(_cancel(0), related="call")
    assert outbox.closed


async def test_an_answered_call_with_no_reverse_call_left_ends_as_before() -> None:
    channel, outbox = _channel()
    await channel.send(Request(id=0, method="roots/list", params={}), related="call")
    await channel.deliver(Response(id=0, result={"roots": []}))
    assert not outbox.closed  # the call itself is still running
    await channel.send(Response(id="call", result={"content": []}))
    assert outbox.closed


@pytest.mark.parametrize("at_once", [True, False])
async def test_an_answer_put_at_once_is_the_json_body_send_would_make(at_once: bool) -> None:
    channel, outbox = _channel()
    channel.wire_ids["call"] = "client-7"
    answer = Response(id="call", result={"ok": True})
    if at_once:
        channel.send_nowait(answer)
    else:
        await channel.send(answer)
    assert outbox.json
    assert outbox.closed
    assert json.loads(outbox._items[0][1]) == {
        "jsonrpc": "2.0",
        "id": "client-7",
        "result": {"ok": True},
    }
    assert not channel.in_flight("call")
    assert "call" not in channel.wire_ids


async def test_what_is_not_a_pending_json_answer_is_left_to_send() -> None:
    channel, outbox = _channel()
    with pytest.raises(trio.WouldBlock):
        channel.send_nowait(Notification(method="notifications/progress", params={}))
    with pytest.raises(trio.WouldBlock):
        channel.send_nowait(Response(id="unknown", result={}))
    await channel.send(Request(id=0, method="sampling/createMessage", params={}), related="call")
    with pytest.raises(trio.WouldBlock):  # the stream is SSE now
        channel.send_nowait(Response(id="call", result={}))
    assert not outbox.json
    batch = HttpSessionChannel("b", HttpServerLimits(), None)
    two = [Request(id=n, method="ping") for n in (1, 2)]
    batch.open_request_stream(two, batch=True)
    with pytest.raises(trio.WouldBlock):
        batch.send_nowait(Response(id=1, result={}))
    batch.close()
    with pytest.raises(trio.WouldBlock):
        batch.send_nowait(Response(id=2, result={}))

"""Property: over Streamable HTTP, a request's stream outlives the reverse calls made on
it (design invariant 4). Whatever the order of the client's cancel, its answers and the
server's cancels, the stream closes exactly when its request has ended and every
reverse call on it has been answered or cancelled, and each cancel of a reverse call
that was still open reaches the client on that stream."""

from __future__ import annotations

import json

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports.http import HttpServerLimits
from trimcp.transports.http._sessions import HttpSessionChannel
from trimcp.wire import Notification, Request, Response


def _methods_on(chunks: list[bytes]) -> list[tuple[str | None, object]]:
    out = []
    for chunk in chunks:
        data = [line[6:] for line in chunk.decode().splitlines() if line.startswith("data: ")]
        if data:
            message = json.loads("".join(data))
            out.append((message.get("method"), (message.get("params") or {}).get("requestId")))
    return out


async def _play(data: st.DataObject) -> None:
    channel = HttpSessionChannel("s", HttpServerLimits(), None)
    outbox = channel.open_request_stream(
        [Request(id="f", method="tools/call", params={})], batch=False
    )
    reverse = data.draw(st.integers(0, 3), label="reverse calls")
    for n in range(reverse):
        await channel.send(Request(id=n, method="roots/list", params={}), related="f")
    open_calls = set(range(reverse))
    forward_over = False
    announced: list[int] = []
    while not (forward_over and not open_calls):
        assert not outbox.closed, "closed while something was still owed on it"
        moves = ["client cancels"] if not forward_over else []
        if open_calls:
            moves += ["client answers", "server cancels"]
        else:
            moves += ["server answers"] if not forward_over else []
        move = data.draw(st.sampled_from(moves), label="move")
        if move == "client cancels":
            channel.cancelled("f")
            forward_over = True
        elif move == "server answers":
            await channel.send(Response(id="f", result={}))
            forward_over = True
        else:
            n = data.draw(st.sampled_from(sorted(open_calls)), label="reverse call")
            open_calls.discard(n)
            if move == "client answers":
                await channel.deliver(Response(id=n, result={"roots": []}))
            else:
                cancel = {"requestId": n}
                await channel.send(
                    Notification(method="notifications/cancelled", params=cancel), related="f"
                )
                announced.append(n)
    assert outbox.closed
    sent = _methods_on([chunk for _, chunk in list(outbox._items or ())])
    assert [m for m in sent if m[0] == "notifications/cancelled"] == [
        ("notifications/cancelled", n) for n in announced
    ]
    assert channel.dropped == 0


@settings(max_examples=200, deadline=None, database=None)
@given(st.data())
def test_a_stream_closes_only_after_its_reverse_calls(data: st.DataObject) -> None:
    trio.run(_play, data)

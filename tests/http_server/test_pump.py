"""How a response is pumped out of its outbox: a ready JSON answer is written without
watching for the client leaving; anything slower is watched, and a client that leaves
ends it."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import trio
import trio.testing

from trimcp.transports.http._asgi_io import EAGER_ROUNDS, pump
from trimcp.transports.http._sse_stream import Outbox


class _Asgi:
    """The server side of ASGI, recorded: what was sent, how often ``receive`` ran."""

    def __init__(self, *, disconnect: bool) -> None:
        self.sent: list[MutableMapping[str, Any]] = []
        self.receives = 0
        self.disconnect = disconnect

    async def receive(self) -> MutableMapping[str, Any]:
        self.receives += 1
        if self.disconnect:
            return {"type": "http.disconnect"}
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)


def _json_outbox(body: bytes) -> Outbox:
    outbox = Outbox(max_events=8, max_bytes=1 << 16)
    outbox.json = True
    outbox.put(body, whole=True)
    return outbox


async def test_a_ready_json_answer_is_written_without_a_watcher() -> None:
    asgi = _Asgi(disconnect=False)
    done = await pump(_json_outbox(b'{"ok":1}'), asgi.receive, asgi.send, (), timeout=5)
    assert done is True
    assert asgi.receives == 0  # nobody listened for the client leaving
    assert [m["type"] for m in asgi.sent] == ["http.response.start", "http.response.body"]
    assert asgi.sent[1]["body"] == b'{"ok":1}'


async def test_an_answer_within_the_eager_rounds_needs_no_watcher() -> None:
    asgi = _Asgi(disconnect=False)
    outbox = Outbox(max_events=8, max_bytes=1 << 16)

    async def answer_soon() -> None:
        for _ in range(EAGER_ROUNDS - 2):
            await trio.lowlevel.checkpoint()
        outbox.json = True
        outbox.put(b"{}", whole=True)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_soon)
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5) is True
    assert asgi.receives == 0
    assert asgi.sent[1]["body"] == b"{}"


async def test_a_slow_answer_is_watched_and_a_leaving_client_ends_it() -> None:
    asgi = _Asgi(disconnect=True)
    outbox = Outbox(max_events=8, max_bytes=1 << 16)  # never answered
    with trio.fail_after(5):
        done = await pump(outbox, asgi.receive, asgi.send, (), timeout=5)
    assert done is False
    assert asgi.receives == 1
    assert asgi.sent == []


async def test_a_slow_json_answer_is_still_written_once_it_comes() -> None:
    asgi = _Asgi(disconnect=False)
    outbox = Outbox(max_events=8, max_bytes=1 << 16)
    async with trio.open_nursery() as nursery:

        async def late() -> None:
            await trio.testing.wait_all_tasks_blocked()
            outbox.json = True
            outbox.put(b"[]", whole=True)

        nursery.start_soon(late)
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5) is True
    assert asgi.receives == 1  # watched while it waited
    assert asgi.sent[1]["body"] == b"[]"


async def test_a_stream_is_woken_for_each_event_and_ends_with_its_outbox() -> None:
    # One task waits on both the outbox and the client: every event that arrives
    # while it watches wakes it, and closing the outbox ends the response.
    asgi = _Asgi(disconnect=False)
    outbox = Outbox(max_events=8, max_bytes=1 << 16)
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            for n in range(3):
                await trio.testing.wait_all_tasks_blocked()
                outbox.put(f"data: {n}\n\n".encode())
            await trio.testing.wait_all_tasks_blocked()
            outbox.close()

        nursery.start_soon(produce)
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5) is True
    bodies = [m.get("body") for m in asgi.sent[1:]]
    assert bodies == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n", b""]
    assert asgi.sent[0]["headers"][0] == (b"content-type", b"text/event-stream")
    assert asgi.receives == 4  # watched before each event and before the end


async def test_a_ready_stream_is_one_body_that_ends_it_and_its_bytes_go_back() -> None:
    # The priming event and the answer, both there within the eager rounds: one body
    # ends the response (one write on the h11 engine, one send under hypercorn), and
    # every byte the outbox held returns to the output budget.
    from trimcp.transports.http._budget import ByteBudget

    budget = ByteBudget(1 << 16)
    asgi = _Asgi(disconnect=False)
    outbox = Outbox(max_events=8, max_bytes=1 << 16, budget=budget)
    outbox.put(b"id: 1\nretry: 1000\ndata: \n\n", "1")  # a priming event

    async def answer_soon() -> None:
        for _ in range(EAGER_ROUNDS - 3):
            await trio.lowlevel.checkpoint()
        outbox.put(b"id: 2\ndata: {}\n\n", "2")
        outbox.close()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_soon)
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5) is True
    assert asgi.receives == 0
    assert [m["type"] for m in asgi.sent] == ["http.response.start", "http.response.body"]
    assert asgi.sent[1] == {
        "type": "http.response.body",
        "body": b"id: 1\nretry: 1000\ndata: \n\nid: 2\ndata: {}\n\n",
        "more_body": False,
    }
    assert budget.used == 0
    assert outbox.held == 0


async def test_events_queued_together_share_a_body_and_later_ones_are_not_held() -> None:
    # What is queued when a body is sent goes in it; an event coming later is sent as
    # it comes (never held back for company), and the end rides on the last body when
    # the outbox is closed by then.
    asgi = _Asgi(disconnect=False)
    outbox = Outbox(max_events=8, max_bytes=1 << 16)
    outbox.put(b"data: a\n\n")
    outbox.put(b"data: b\n\n")
    async with trio.open_nursery() as nursery:

        async def later() -> None:
            await trio.testing.wait_all_tasks_blocked()
            assert [m.get("body") for m in asgi.sent[1:]] == [b"data: a\n\ndata: b\n\n"]
            outbox.put(b"data: c\n\n")
            await trio.testing.wait_all_tasks_blocked()
            assert [m.get("body") for m in asgi.sent[1:]][-1] == b"data: c\n\n"
            outbox.put(b"data: d\n\n")
            outbox.close()

        nursery.start_soon(later)
        assert await pump(outbox, asgi.receive, asgi.send, (), timeout=5) is True
    assert [(m.get("body"), m.get("more_body")) for m in asgi.sent[1:]] == [
        (b"data: a\n\ndata: b\n\n", True),
        (b"data: c\n\n", True),
        (b"data: d\n\n", False),
    ]


async def test_a_response_cancelled_in_its_eager_rounds_ends_at_the_watch() -> None:
    # The eager rounds do not check for cancellation (a few calls less each); the
    # watch that follows them does, so a cancelled response ends there, unwritten.
    asgi = _Asgi(disconnect=False)
    outbox = Outbox(max_events=8, max_bytes=1 << 16)  # never answered
    with trio.CancelScope() as scope:
        scope.cancel()
        await pump(outbox, asgi.receive, asgi.send, (), timeout=5)
    assert scope.cancelled_caught
    assert asgi.sent == []


def test_an_outbox_closed_again_wakes_nobody() -> None:
    # The end of a JSON answer closes its outbox more than once (the answer, the
    # stream's end, the response's end): only the first close wakes the response.
    outbox = Outbox(max_events=8, max_bytes=1 << 16)
    woken: list[str] = []
    outbox.waker = lambda: woken.append("first")
    outbox.close()
    outbox.waker = lambda: woken.append("again")  # nobody waits on a closed outbox
    outbox.close()
    outbox.abort()
    assert woken == ["first"]
    assert outbox.closed

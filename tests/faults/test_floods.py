"""Floods and oversized input over a byte stream (faults-and-limits rows B21, B22, B26).

Each test pushes far more at a session than it can take at once and checks the bound
that holds it: the in-flight cap (with backpressure on the stream), the tables after a
storm of cancellations, and the line limit against a line that never ends.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import trio
import trio.testing

from trimcp.nursery import HandlerContext, SessionLimits
from trimcp.protocol import CreateMessageParams, CreateMessageResult, TextContent
from trimcp.server import Server, ToolContext
from trimcp.wire import INVALID_REQUEST

from ._bytes import WAIT, byte_session, client_against_bytes, error_of

FLOOD = 10_000


# ---------------------------------------------------------------- B21


async def test_b21_a_sampling_flood_is_held_at_the_in_flight_cap(autojump_clock: Any) -> None:
    """10 000 ``sampling/createMessage`` from a hostile server, over a lockstep stream.

    The client handles at most ``max_in_flight`` at once and stops reading beyond that:
    the hostile writer blocks (backpressure), nothing queues up inside the client.
    """
    cap = 100
    gate = trio.Event()
    peak = 0

    async def sampling(ctx: HandlerContext, _params: CreateMessageParams) -> CreateMessageResult:
        nonlocal peak
        peak = max(peak, ctx.session_object.in_flight)
        await gate.wait()
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")

    limits = SessionLimits(max_in_flight=cap)
    async with client_against_bytes(limits, lockstep=True, sampling=sampling) as (client, peer):
        written = 0
        answered: set[int] = set()
        line = {
            "jsonrpc": "2.0",
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
            },
        }

        async def flood() -> None:
            nonlocal written
            for index in range(FLOOD):
                await peer.send({**line, "id": index})
                written += 1

        async def collect() -> None:
            while len(answered) < FLOOD:
                reply = await peer.read()
                assert reply["result"]["content"]["text"] == "ok", reply
                assert reply["id"] not in answered
                answered.add(reply["id"])

        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(flood)
                await trio.testing.wait_all_tasks_blocked()
                # Held: the cap is full, the reader stopped, the writer is blocked.
                assert client.session.in_flight == cap
                # the cap, the admission queue, and what is in the stream's buffers
                assert written <= cap + SessionLimits().max_queued + 2, written
                nursery.start_soon(collect)
                gate.set()
        assert written == FLOOD
        assert len(answered) == FLOOD
        assert peak <= cap
        assert client.session.in_flight == 0
        assert client.session.pending == 0


# ---------------------------------------------------------------- B22


def _storm_server() -> Server:
    server = Server("storm", "1.0")

    @server.tool()
    async def work(ctx: ToolContext) -> str:
        await trio.sleep(1)
        return "done"

    return server


def _request(request_id: int) -> bytes:
    call = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "work", "arguments": {}},
    }
    return json.dumps(call).encode() + b"\n"


def _cancel(request_id: int) -> bytes:
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }
    return json.dumps(note).encode() + b"\n"


async def test_b22_cancellation_storm_leaves_nothing_behind(autojump_clock: Any) -> None:
    """10 000 request+cancel pairs: the cancel before, during and after the request.

    * before: the cancel names an unknown id and is ignored; the request is answered;
    * during: the request is cancelled while in flight and is never answered;
    * after: the cancel names a completed request and is ignored.
    """
    before = range(0, FLOOD, 3)
    range(1, FLOOD, 3)
    after = range(2, FLOOD, 3)
    async with byte_session(_storm_server()) as peer:
        session = peer.session
        chunk = bytearray()
        for request_id in range(FLOOD):
            if request_id % 3 == 0:
                chunk += _cancel(request_id) + _request(request_id)
            elif request_id % 3 == 1:
                chunk += _request(request_id) + _cancel(request_id)
            else:
                chunk += _request(request_id)
            if len(chunk) > 1 << 16:
                await peer.write(bytes(chunk))
                chunk.clear()
        await peer.write(bytes(chunk))
        answers: dict[int, int] = {}
        expected = len(before) + len(after)
        with trio.fail_after(WAIT):
            for _ in range(expected):
                reply = await peer.read()
                assert reply["result"]["content"][0]["text"] == "done", reply
                answers[reply["id"]] = answers.get(reply["id"], 0) + 1
        assert set(answers) == set(before) | set(after)
        assert set(answers.values()) == {1}  # at most one terminal message per id
        await peer.write(b"".join(_cancel(request_id) for request_id in after))
        await trio.sleep(5)  # long past every handler's end
        assert await peer.quiet() == []  # nothing for the cancelled ones, ever
        assert session.in_flight == session.pending == session.background_tasks == 0
        # Later requests are still served.
        later = await peer.call_tool("later", "work", {})
        assert later["result"]["content"][0]["text"] == "done"
        await peer.assert_alive()


# ---------------------------------------------------------------- B26


async def test_b26_a_100_mb_line_is_refused_with_bounded_memory() -> None:
    """No newline for 100 MB: error sent, transport closed, memory bounded by the limit."""
    chunk = b"x" * (64 * 1024)
    total_chunks = (100 * 1024 * 1024) // len(chunk)
    limit = 4 * 1024 * 1024
    server = Server("big", "1.0")
    tracemalloc.start()
    try:
        async with byte_session(server) as peer:
            session = peer.session
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
            sent = 0
            await peer.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"')
            with trio.fail_after(WAIT):
                for _ in range(total_chunks):
                    try:
                        await peer.write(chunk)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        break
                    sent += 1
                    await trio.testing.wait_all_tasks_blocked()
                    if session.is_closed:
                        break
            _, peak = tracemalloc.get_traced_memory()
            reply = await peer.read()
            assert error_of(reply) == (None, INVALID_REQUEST)
            assert "too large" in reply["error"]["message"]
            with trio.fail_after(WAIT):
                await session.wait_closed()
            # The transport was closed: the stream ends after the error.
            with trio.fail_after(WAIT):
                assert await peer.stream.receive_some(1) == b""
            assert sent * len(chunk) <= limit + 2 * len(chunk), sent
    finally:
        tracemalloc.stop()
    assert peak - base < limit + 4 * 1024 * 1024, peak - base

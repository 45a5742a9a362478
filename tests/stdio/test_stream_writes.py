"""``StreamChannel`` writes: coalesced, whole lines only, bounded by ``send_timeout``.

The send stream here is a gate: ``send_all`` records what it was given and blocks
until the test opens the gate, so a write can be held "in the pipe" while other
senders queue, get cancelled, or the deadline passes (virtual time).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from trimcp.dispatch import Registry
from trimcp.nursery import HandlerContext, Role, open_session
from trimcp.transports import StreamChannel
from trimcp.wire import Notification

from ..core._support import no_leaked_tasks
from ._gate import GatedSendStream

pytestmark = pytest.mark.trio


def _note(n: int) -> Notification:
    return Notification(method="notifications/message", params={"n": n})


def _numbers(writes: list[bytes]) -> list[int]:
    lines = b"".join(writes).split(b"\n")
    assert lines[-1] == b""  # every write ends on a line boundary
    return [json.loads(line)["params"]["n"] for line in lines[:-1]]


async def _nursery_of_senders(task_status: trio.TaskStatus[trio.Nursery]) -> None:
    async with trio.open_nursery() as nursery:
        task_status.started(nursery)
        await trio.sleep_forever()


async def _line_0_in_the_pipe(nursery: trio.Nursery) -> tuple[GatedSendStream, StreamChannel]:
    """A channel whose first write (line 0) is held in the pipe by a shut gate."""
    out = GatedSendStream()
    out.shut()
    channel = _channel(out)
    nursery.start_soon(channel.send, _note(0))
    await trio.testing.wait_all_tasks_blocked()
    assert out.writing == 1
    return out, channel


def _channel(out: GatedSendStream, **kwargs: float) -> StreamChannel:
    _, receive = trio.testing.memory_stream_pair()
    return StreamChannel(out, receive, **kwargs)  # type: ignore[arg-type]


async def test_a_lone_message_is_written_at_once() -> None:
    out = GatedSendStream()
    channel = _channel(out)
    await channel.send(_note(1))
    assert len(out.writes) == 1
    assert _numbers(out.writes) == [1]


async def test_senders_queued_behind_a_write_go_out_in_one_batch() -> None:
    async with trio.open_nursery() as nursery:
        out, channel = await _line_0_in_the_pipe(nursery)
        for n in range(1, 201):
            nursery.start_soon(channel.send, _note(n))
        await trio.testing.wait_all_tasks_blocked()
        out.open.set()
    assert len(out.writes) == 2  # the first line, then the 200 queued behind it at once
    assert sorted(_numbers(out.writes)) == list(range(201))


async def test_a_sender_cancelled_while_queued_withdraws_its_line() -> None:
    async with trio.open_nursery() as nursery:
        out, channel = await _line_0_in_the_pipe(nursery)
        withdrawn = trio.CancelScope()

        async def cancelled_sender() -> None:
            with withdrawn:
                await channel.send(_note(1))

        nursery.start_soon(cancelled_sender)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(channel.send, _note(2))
        await trio.testing.wait_all_tasks_blocked()
        withdrawn.cancel()
        await trio.testing.wait_all_tasks_blocked()
        out.open.set()
    assert sorted(_numbers(out.writes)) == [0, 2]


async def test_cancelling_the_writer_mid_write_keeps_every_line_whole() -> None:
    # The task holding the lock is writing its own line and those queued with it; its
    # cancellation must neither cut the write short (half a line on the stream) nor
    # drop the lines it carries.
    out = GatedSendStream()
    channel = _channel(out)
    out.shut()
    async with trio.open_nursery() as outer:
        senders: trio.Nursery = await outer.start(_nursery_of_senders)
        senders.start_soon(channel.send, _note(0))
        await trio.testing.wait_all_tasks_blocked()
        for n in (1, 2, 3):
            senders.start_soon(channel.send, _note(n))
        await trio.testing.wait_all_tasks_blocked()
        out.open.set()  # the first write completes; the next holder takes 1, 2 and 3
        out.shut()
        await trio.testing.wait_all_tasks_blocked()
        assert out.writing == 1
        senders.cancel_scope.cancel()  # every sender, the writer of 1-3 among them
        await trio.testing.wait_all_tasks_blocked()
        assert out.writing == 1  # still writing: shielded
        out.open.set()
    assert len(out.writes) == 2
    assert _numbers(out.writes[:1]) == [0]
    assert sorted(_numbers(out.writes[1:])) == [1, 2, 3]  # in Trio's start order
    await channel.send(_note(4))  # the channel still works
    assert _numbers(out.writes[2:]) == [4]


async def test_a_peer_that_stops_reading_breaks_the_channel_after_send_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    out = GatedSendStream()
    out.shut()
    channel = _channel(out, send_timeout=5)
    failures: list[str] = []

    async def send(n: int) -> None:
        try:
            await channel.send(_note(n))
        except trio.BrokenResourceError as exc:
            failures.append(str(exc))

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for n in range(3):
            nursery.start_soon(send, n)
    assert trio.current_time() - start == pytest.approx(5)
    assert failures == ["a write took over 5 s: the peer stopped reading"] * 3
    with pytest.raises(trio.BrokenResourceError, match="stopped reading"):
        await channel.send(_note(3))
    with pytest.raises(trio.BrokenResourceError, match="stopped reading"):
        await channel.receive()
    assert out.writes == []


async def test_a_sender_cancelled_after_its_line_was_taken_returns_normally() -> None:
    # Its line is in a batch another sender is writing: the send went ahead, and must
    # not raise Cancelled (a request would look unsent and never get its cancellation).
    outcome: list[str] = []
    async with trio.open_nursery() as nursery:
        out, channel = await _line_0_in_the_pipe(nursery)
        taken = trio.CancelScope()

        async def sender() -> None:
            with taken:
                await channel.send(_note(2))
                outcome.append("returned")
            outcome.append("cancelled" if taken.cancelled_caught else "not cancelled")

        nursery.start_soon(channel.send, _note(1))
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(sender)  # queued behind the sender of line 1
        await trio.testing.wait_all_tasks_blocked()
        out.open.set()  # line 0 written; the sender of line 1 takes lines 1 and 2
        out.shut()
        await trio.testing.wait_all_tasks_blocked()
        assert out.writing == 1
        taken.cancel()  # the sender of line 2 waits for the lock, its line on its way
        await trio.testing.wait_all_tasks_blocked()
        out.open.set()
    assert outcome == ["returned", "not cancelled"]
    assert sorted(_numbers(out.writes)) == [0, 1, 2]
    assert len(out.writes) == 2


async def test_a_sender_already_cancelled_never_has_its_line_written() -> None:
    # Trio's cancellation check (the lock's among them) lets other tasks run before it
    # raises. A cancelled sender that queued its line first would let the lock holder
    # take it meanwhile: the line went out and the send returned normally (a torn-down
    # subscription still notified).
    #
    # Line 0 is in the pipe and the sender of line 1 waits for the lock. Two cancelled
    # senders wake in the same scheduling step as line 0's writer, one before it and one
    # after it (Trio runs a step's tasks in either order): when line 0's write ends the
    # lock goes to the sender of line 1, which takes its batch while the cancelled
    # senders are still in their cancellation checks.
    async with trio.open_nursery() as nursery:
        out, channel = await _line_0_in_the_pipe(nursery)
        nursery.start_soon(channel.send, _note(1))
        await trio.testing.wait_all_tasks_blocked()
        woken = [trio.Event(), trio.Event()]
        scopes: list[trio.CancelScope] = []
        outcome: list[str] = []

        async def cancelled_sender(n: int) -> None:
            await woken[n - 10].wait()
            with trio.CancelScope() as scope:
                scopes.append(scope)
                scope.cancel()
                await channel.send(_note(n))
                outcome.append(f"{n} returned")

        nursery.start_soon(cancelled_sender, 10)
        nursery.start_soon(cancelled_sender, 11)
        await trio.testing.wait_all_tasks_blocked()
        woken[0].set()
        out.open.set()  # line 0 written; the lock goes to the sender of line 1
        woken[1].set()
    assert outcome == []
    assert [scope.cancelled_caught for scope in scopes] == [True, True]
    assert sorted(_numbers(out.writes)) == [0, 1]


def _server_registry() -> Registry:
    registry = Registry()

    async def echo(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        return {"n": params["n"]}

    registry.add_request("echo", echo)
    return registry


async def test_a_sessions_writer_task_writes_its_answers_and_ends_with_it() -> None:
    # The session starts the stream's writer task; the handlers' answers are queued for
    # it without waiting (put), and what is queued when the session ends is written
    # before the task ends with the session's nursery: no answer already made is lost,
    # and no task of the session outlives it.
    out = GatedSendStream()
    out.shut()
    feed, receive = trio.testing.memory_stream_pair()
    channel = StreamChannel(out, receive)  # type: ignore[arg-type]
    request = b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"n":%d}}\n'
    async with (
        no_leaked_tasks(),
        open_session(channel, role=Role.SERVER, registry=_server_registry()) as session,
    ):
        assert channel._batcher.writer
        for n in range(5):
            await feed.send_all(request % (n, n))
        await trio.testing.wait_all_tasks_blocked()
        assert session.in_flight == 0  # every handler finished: its answer was queued
        assert out.writing == 1  # the first write is in the pipe, the rest queued
        out.open.set()
        session.close()
    assert not channel._batcher.writer
    answers = [json.loads(line) for line in b"".join(out.writes).split(b"\n")[:-1]]
    # Every answer once; handlers finish in the scheduler's order, not the requests'.
    assert sorted(a["result"]["n"] for a in answers) == list(range(5))


async def test_a_channel_without_a_session_has_no_writer_task() -> None:
    out = GatedSendStream()
    channel = _channel(out)
    with pytest.raises(trio.WouldBlock):
        channel.send_nowait(_note(1))
    await channel.send(_note(2))  # written by its sender, as before
    assert _numbers(out.writes) == [2]

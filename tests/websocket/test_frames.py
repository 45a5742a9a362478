"""WsprotoMessages over an in-memory stream pair, on a mock clock: keep-alive pings,
fragment joining and the closing handshake, deterministic and instant."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing
from wsproto import WSConnection
from wsproto.events import CloseConnection, Ping, TextMessage

from trimcp.transports.websocket import WebSocketChannel, WebSocketLimits, WsprotoMessages
from trimcp.wire import Notification

from ._raw import in_memory


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Every test here runs on a mock clock that jumps as soon as all tasks wait."""
    return trio.testing.MockClock(autojump_threshold=0)


async def _pair(
    limits: WebSocketLimits,
) -> tuple[WsprotoMessages, WSConnection, trio.abc.Stream]:
    """A WsprotoMessages client end, and the raw wsproto server end with its stream."""
    return in_memory(limits)


async def _events(server: WSConnection, stream: trio.abc.Stream) -> list[object]:
    server.receive_data(await stream.receive_some(65536))
    return list(server.events())


async def test_pings_are_sent_and_a_silent_peer_is_dropped(clock: trio.testing.MockClock) -> None:
    limits = WebSocketLimits(ping_interval=20.0, ping_timeout=5.0)
    messages, server, stream = await _pair(limits)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(messages.keepalive)

        async def reader() -> None:  # the session's reader sees the drop
            with pytest.raises(trio.BrokenResourceError):
                await messages.receive()

        nursery.start_soon(reader)
        first = await _events(server, stream)
        assert isinstance(first[0], Ping)
        assert trio.current_time() - start == 20.0
        # Answer the first ping: the connection lives on to the next one.
        await stream.send_all(server.send(first[0].response()))
        second = await _events(server, stream)
        assert isinstance(second[0], Ping)
        assert trio.current_time() - start == 40.0
        # Stay silent: the connection is dropped once the pong is 5 s late.
    assert trio.current_time() - start == 45.0


async def test_no_pings_when_disabled(clock: trio.testing.MockClock) -> None:
    messages, _, _ = await _pair(WebSocketLimits(ping_interval=None))
    with trio.move_on_after(3600) as scope:
        await messages.keepalive()  # returns at once
    assert not scope.cancelled_caught


async def test_fragments_join_and_pings_are_answered_mid_message() -> None:
    messages, server, stream = await _pair(WebSocketLimits())
    data = server.send(TextMessage(data='{"a":', message_finished=False))
    data += server.send(Ping(payload=b"p"))
    data += server.send(TextMessage(data="1}", message_finished=True))
    await stream.send_all(data)
    assert await messages.receive() == '{"a":1}'
    pong = await _events(server, stream)
    assert [type(e).__name__ for e in pong] == ["Pong"]


async def test_close_handshake_from_the_peer_ends_receive() -> None:
    messages, server, stream = await _pair(WebSocketLimits())

    await stream.send_all(server.send(CloseConnection(code=1000)))
    with pytest.raises(trio.EndOfChannel):
        await messages.receive()
    answer = await _events(server, stream)
    assert isinstance(answer[0], CloseConnection)


def _gated(stream: trio.abc.Stream) -> tuple[list[int], trio.Event, list[bool]]:
    """Count the socket writes of ``stream``'s send side; the first waits for ``gate``;
    the writes after ``fail[0]`` turns true fail as a broken connection would."""
    send = stream.send_stream  # type: ignore[attr-defined]
    pump = send.send_all_hook
    calls: list[int] = []
    gate = trio.Event()
    fail = [False]

    async def hook() -> None:
        calls.append(1)
        if len(calls) == 1:
            await gate.wait()
        if fail[0]:
            raise trio.BrokenResourceError("gone")
        await pump()

    send.send_all_hook = hook
    return calls, gate, fail


async def _texts(server: WSConnection, stream: trio.abc.Stream) -> list[str]:
    server.receive_data(await stream.receive_some(65536))
    return [e.data for e in server.events() if isinstance(e, TextMessage)]


async def test_frames_queued_during_a_write_go_out_together_in_order() -> None:
    messages, server, stream = await _pair(WebSocketLimits(ping_interval=None))
    calls, gate, _fail = _gated(messages._stream)
    order: list[str] = []

    async def send(text: str) -> None:
        order.append(text)  # the frame is made in this same step
        await messages.send_text(text)

    async with trio.open_nursery() as nursery:
        for i in range(50):
            nursery.start_soon(send, str(i))
        await trio.testing.wait_all_tasks_blocked()
        gate.set()
    assert len(calls) <= 2  # not 50: frames queued while one writer waits go out with it
    received: list[str] = []
    while len(received) < 50:
        received += await _texts(server, stream)
    assert received == order


async def test_a_writer_cancelled_before_its_frame_went_out_withdraws_it() -> None:
    messages, server, stream = await _pair(WebSocketLimits(ping_interval=None))
    _calls, gate, _fail = _gated(messages._stream)
    scope = trio.CancelScope()

    async def cancelled() -> None:
        with scope:
            await messages.send_text("withdrawn")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(messages.send_text, "first")  # holds the write, gated
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(cancelled)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(messages.send_text, "second")
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
        gate.set()
    received: list[str] = []
    while len(received) < 2:
        received += await _texts(server, stream)
    assert received == ["first", "second"]


async def test_a_failed_batch_fails_every_writer_in_it_and_drops_the_connection() -> None:
    messages, _server, _stream = await _pair(WebSocketLimits(ping_interval=None))
    _calls, gate, fail = _gated(messages._stream)
    failures: list[str] = []

    async def send(text: str) -> None:
        try:
            await messages.send_text(text)
        except trio.BrokenResourceError:
            failures.append(text)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send, "first")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(send, "b")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(send, "c")
        await trio.testing.wait_all_tasks_blocked()
        fail[0] = True  # the first write fails: "first"; "b" and "c" then go out in a
        gate.set()  # second batch, over a connection that is already dropped
    assert sorted(failures) == ["b", "c", "first"]
    with pytest.raises((trio.BrokenResourceError, trio.ClosedResourceError)):
        await messages.send_text("after")


async def test_whole_text_messages_already_read_are_taken_without_io() -> None:
    # The session's reader drains a burst in one step: receive_nowait hands over what
    # wsproto already parsed, and leaves fragments and binary to receive; a ping is
    # answered as soon as it is read.
    messages, server, stream = await _pair(WebSocketLimits())
    channel = WebSocketChannel(messages)
    with pytest.raises(trio.WouldBlock):
        channel.receive_nowait()  # nothing read yet
    data = b"".join(
        server.send(TextMessage(data=f'{{"jsonrpc":"2.0","method":"n","params":{{"i":{i}}}}}'))
        for i in range(3)
    )
    data += server.send(TextMessage(data="not json"))
    data += server.send(TextMessage(data='{"jsonrpc":"2.0","method":"n","params":{"i":3}}'))
    data += server.send(Ping(payload=b"p"))
    data += server.send(TextMessage(data='{"jsonrpc":"2.0","method":"n",', message_finished=False))
    data += server.send(TextMessage(data='"params":{"i":4}}'))
    await stream.send_all(data)
    first = await channel.receive()  # reads the whole burst from the stream
    burst = [first]
    while True:
        try:
            burst.append(channel.receive_nowait())
        except trio.WouldBlock:
            break
    assert [m.params for m in burst] == [{"i": 0}, {"i": 1}, {"i": 2}]  # type: ignore[union-attr]
    # The undecodable message is answered by receive, in order, then reading goes on.
    fourth = await channel.receive()
    assert fourth.params == {"i": 3}  # type: ignore[union-attr]
    assert channel.rejected == 1
    with pytest.raises(trio.WouldBlock):
        channel.receive_nowait()  # fragments come next: receive joins them
    fifth = await channel.receive()
    assert fifth.params == {"i": 4}  # type: ignore[union-attr]
    events = await _events(server, stream)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Pong", "TextMessage"]  # the pong when read, then the -32700 answer
    assert '"code":-32700' in events[1].data  # type: ignore[attr-defined]


async def test_with_a_writer_task_messages_are_queued_and_can_be_withdrawn() -> None:
    messages, server, stream = await _pair(WebSocketLimits(ping_interval=None))
    channel = WebSocketChannel(messages)
    _calls, gate, _fail = _gated(messages._stream)
    with pytest.raises(trio.WouldBlock):
        channel.send_nowait(Notification(method="n"))  # no writer task yet
    async with trio.open_nursery() as nursery:
        assert channel.start_writer(nursery.start_soon)
        first = channel.send_nowait(Notification(method="first"))
        await trio.testing.wait_all_tasks_blocked()  # the writer took it, and waits
        second = channel.send_nowait(Notification(method="second"))
        third = channel.send_nowait(Notification(method="third"))
        assert not channel.withdraw(first)  # being written
        assert channel.withdraw(second)  # never will be
        assert not channel.withdraw(second)
        assert not channel.withdraw("not a key")
        gate.set()
        received: list[str] = []
        while len(received) < 2:
            received += await _texts(server, stream)
        assert [json.loads(text)["method"] for text in received] == ["first", "third"]
        assert not channel.withdraw(third)
        nursery.cancel_scope.cancel()
    assert not messages._batcher.writer  # the task ends with its nursery
    with pytest.raises(trio.WouldBlock):
        channel.send_nowait(Notification(method="n"))


async def test_a_peer_that_stops_reading_breaks_the_connection_after_send_timeout(
    clock: trio.testing.MockClock,
) -> None:
    messages, _server, _stream = await _pair(WebSocketLimits(ping_interval=None, send_timeout=5))
    _calls, _gate, _fail = _gated(messages._stream)  # the gate never opens
    start = trio.current_time()
    with pytest.raises(trio.BrokenResourceError, match="took over 5 s"):
        await messages.send_text("stuck")
    assert trio.current_time() - start == 5.0
    with pytest.raises((trio.BrokenResourceError, trio.ClosedResourceError)):
        await messages.send_text("after")


async def test_a_message_io_without_a_writer_task_sends_as_before() -> None:
    """An ASGI server's WebSocket writes for itself: nothing is queued for a writer."""

    class Io:
        def __init__(self) -> None:
            self.sent: list[str] = []

        async def send_text(self, text: str) -> None:
            self.sent.append(text)

        async def receive(self) -> str | bytes:
            raise trio.EndOfChannel

        async def close(self, code: int = 1000, reason: str = "") -> None:
            return None

    io = Io()
    channel = WebSocketChannel(io)
    async with trio.open_nursery() as nursery:
        assert not channel.start_writer(nursery.start_soon)
    with pytest.raises(trio.WouldBlock):
        channel.send_nowait(Notification(method="n"))
    assert not channel.withdraw(1)
    await channel.send(Notification(method="n"))
    assert [json.loads(text)["method"] for text in io.sent] == ["n"]


async def test_a_writer_cancelled_with_frames_to_write_still_writes_them() -> None:
    """The session's end cancels its writer task: frames it was already woken for go
    out whole when the socket takes them, and the connection stays usable (for the
    close frame), instead of being dropped unwritten."""
    messages, server, stream = in_memory(WebSocketLimits(ping_interval=None), sockets=True)
    channel = WebSocketChannel(messages)
    async with trio.open_nursery() as nursery:
        assert channel.start_writer(nursery.start_soon)
        await trio.testing.wait_all_tasks_blocked()  # the writer waits for frames
        channel.send_nowait(Notification(method="last"))
        nursery.cancel_scope.cancel()
    assert not messages._broken
    assert [json.loads(text)["method"] for text in await _texts(server, stream)] == ["last"]
    await messages.send_text("after")  # a sender writes for itself once the task is gone
    assert await _texts(server, stream) == ["after"]
    await stream.aclose()
    await messages.close()


async def test_sending_is_a_checkpoint_even_when_the_socket_takes_it_at_once() -> None:
    messages, server, stream = in_memory(WebSocketLimits(ping_interval=None), sockets=True)
    channel = WebSocketChannel(messages)
    with trio.testing.assert_checkpoints():
        await messages.send_text("one")
    with trio.testing.assert_checkpoints():
        await channel.send(Notification(method="two"))
    texts = await _texts(server, stream)
    assert texts[0] == "one"
    assert [json.loads(text)["method"] for text in texts[1:]] == ["two"]
    await stream.aclose()
    await messages.close()

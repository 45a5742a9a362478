"""``wait_for_bytes``: a parked reader waits in ``wait_readable`` on sockets only."""

from __future__ import annotations

import trio
import trio.testing

from trimcp.transports._readable import wait_for_bytes


async def test_returns_when_the_socket_has_bytes_or_eof() -> None:
    a, b = trio.socket.socketpair()
    left, right = trio.SocketStream(a), trio.SocketStream(b)
    woke: list[str] = []

    async def reader() -> None:
        await wait_for_bytes(right)
        woke.append("bytes")
        assert await right.receive_some(10) == b"hi"
        await wait_for_bytes(right)
        woke.append("eof")
        assert await right.receive_some(10) == b""

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        assert woke == []  # nothing to read yet: parked
        await left.send_all(b"hi")
        await trio.testing.wait_all_tasks_blocked()
        assert woke == ["bytes"]
        await left.aclose()
    assert woke == ["bytes", "eof"]
    await right.aclose()


async def test_other_streams_return_at_once() -> None:
    _left, right = trio.testing.memory_stream_pair()
    with trio.CancelScope() as scope:
        scope.cancel()
        await wait_for_bytes(right)  # no checkpoint: the stream's receive_some waits
    assert not scope.cancelled_caught

"""``open_tcp``: IP literals connect directly, names go through ``open_tcp_stream``."""

from __future__ import annotations

import socket

import pytest
import trio

from trimcp.transports.http._client_conn import open_tcp


async def _echo_once(listener: trio.SocketListener) -> None:
    stream = await listener.accept()
    async with stream:
        await stream.send_all(await stream.receive_some(100))


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_connects_and_carries_bytes(host: str) -> None:
    with trio.fail_after(10):
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_echo_once, listeners[0])
            stream = await open_tcp(host, port)
            async with stream:
                assert stream.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                await stream.send_all(b"ping")
                assert await stream.receive_some(100) == b"ping"
        await listeners[0].aclose()


async def test_a_refused_literal_raises_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before use: nothing listens
    with trio.fail_after(10), pytest.raises(OSError) as refused:
        await open_tcp("127.0.0.1", port)
    assert isinstance(refused.value, ConnectionRefusedError)

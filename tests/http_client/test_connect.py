"""``open_tcp``: IP literals connect directly, names go through ``open_tcp_stream``."""

from __future__ import annotations

import socket

import h11
import pytest
import trio

from trimcp.transports.http._client_conn import HttpConnection, Origin, open_tcp


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


async def _answer_whole_request(
    listener: trio.SocketListener, got: list[bytes], head_read: trio.Event
) -> None:
    """Read one request to its end with h11, answer it (the body once the client has
    read the head: two reads), then close."""
    stream = await listener.accept()
    async with stream:
        server = h11.Connection(h11.SERVER)
        body = bytearray()
        while True:
            event = server.next_event()
            if event is h11.NEED_DATA:
                server.receive_data(bytes(await stream.receive_some(65536)))
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
        got.append(bytes(body))
        answer = h11.Response(status_code=200, headers=[("Content-Length", "5")])
        await stream.send_all(server.send(answer) or b"")
        await head_read.wait()
        await stream.send_all(server.send(h11.Data(data=b"hello")) or b"")
        await stream.send_all(server.send(h11.EndOfMessage()) or b"")


@pytest.mark.parametrize("size", [10, 8 * 1024 * 1024])
async def test_a_request_the_socket_does_not_take_at_once_is_sent_whole(size: int) -> None:
    """Writes and reads skip Trio's stream methods when the socket can serve them at
    once; a body larger than the socket buffer still arrives whole, and an answer
    read in pieces too."""
    body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    got: list[bytes] = []
    head_read = trio.Event()
    with trio.fail_after(20):
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_answer_whole_request, listeners[0], got, head_read)
            conn = HttpConnection(await open_tcp("127.0.0.1", port), max_header_size=16384)
            origin = Origin("http", "127.0.0.1", port, "/", f"127.0.0.1:{port}")
            await conn.send_request("POST", origin, [], body)
            response = await conn.receive_response()
            assert response.status_code == 200
            head_read.set()
            assert await conn.read_body(100) == b"hello"
            assert conn.reusable
            await conn.aclose()
        await listeners[0].aclose()
    assert got == [body]

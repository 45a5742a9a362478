"""The h11 engine's socket reads and writes that skip a scheduler round when they
cannot block (``transports/_direct.py``): what the socket does not take at once still
arrives whole, a client that stops reading costs a write at most ``send_timeout``, and
the helpers never touch anything but a plain open socket."""

from __future__ import annotations

import json

import pytest
import trio
import trio.lowlevel
import trio.testing

import trimcp
from trimcp.transports._direct import read_now, write_now
from trimcp.transports.http import HttpServerLimits

from .test_raw import _initialize, post, serving

BIG = 8 * 1024 * 1024  # beyond any loopback socket buffer


def _server() -> trimcp.Server:
    server = trimcp.Server("direct-io", version="1.0")

    @server.tool()
    async def big(size: int) -> str:
        """A text of ``size`` bytes."""
        return "x" * size

    return server


def _call(size: int, session: str) -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "big", "arguments": {"size": size}},
        }
    ).encode()
    return post(body, "Mcp-Protocol-Version: 2025-11-25", session=session)


async def _read_response(stream: trio.SocketStream) -> tuple[bytes, bytes]:
    """One whole response (head, body) read in small slow pieces."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive_some(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = await stream.receive_some(4096)
        assert chunk, "the server closed mid-body"
        body += chunk
        if len(body) % (1024 * 1024) < 4096:
            await trio.lowlevel.checkpoint()  # let the server find the buffer full now and then
    return head, body


async def test_an_answer_larger_than_the_socket_buffer_arrives_whole() -> None:
    async with serving(_server(), "h11") as port:
        session = await _initialize(port)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            for _ in range(2):  # and the connection carries the next exchange after it
                await stream.send_all(_call(BIG, session))
                with trio.fail_after(30):
                    head, body = await _read_response(stream)
                assert head.startswith(b"HTTP/1.1 200"), head[:200]
                answer = json.loads(body)
                assert answer["id"] == 2
                assert answer["result"]["content"][0]["text"] == "x" * BIG


async def test_a_client_that_stops_reading_costs_one_bounded_write(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limits = HttpServerLimits(send_timeout=5)
    async with serving(_server(), "h11", limits=limits) as port:
        session = await _initialize(port)
        stalled = await trio.open_tcp_stream("127.0.0.1", port)
        async with stalled:
            await stalled.send_all(_call(BIG, session))
            # Never read: the server's write fills the buffers and waits; past
            # send_timeout it gives up and closes the connection.
            began = trio.current_time()
            await trio.sleep(limits.send_timeout + 1)
            assert trio.current_time() - began >= limits.send_timeout
            received = 0
            with trio.fail_after(60):
                while chunk := await stalled.receive_some(1 << 20):
                    received += len(chunk)
            assert 0 < received < BIG  # cut short, then closed
        # The server goes on serving others.
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(_call(10, session))
            with trio.fail_after(10):
                head, body = await _read_response(stream)
        assert head.startswith(b"HTTP/1.1 200")
        assert json.loads(body)["result"]["content"][0]["text"] == "x" * 10


async def test_direct_helpers_touch_only_an_open_plain_socket() -> None:
    left, _right = trio.testing.memory_stream_pair()
    assert read_now(left, 10) is None
    assert write_now(left, b"x") == 0
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    async with listener:
        port = listener.socket.getsockname()[1]
        client = await trio.open_tcp_stream("127.0.0.1", port)
        server = await listener.accept()
        assert read_now(server, 10) is None  # nothing there yet: it would block
        assert write_now(client, b"hello") == 5
        await trio.lowlevel.wait_readable(server.socket)
        assert read_now(server, 10) == b"hello"
        await client.aclose()
        await trio.lowlevel.wait_readable(server.socket)
        assert read_now(server, 10) == b""  # EOF
        await server.aclose()
        # Closed: the descriptor is gone (its number may already be someone else's).
        assert read_now(server, 10) is None
        assert write_now(server, b"x") == 0


class _Ticket:
    """A connection table's ticket, recording each wait for a request head (which is
    when the engine sets up a deadline for it)."""

    def __init__(self) -> None:
        self.waits = 0

    def timeout(self, *, began: bool) -> float:
        return 5.0

    def waiting(self, scope: trio.CancelScope) -> None:
        self.waits += 1

    def working(self) -> None:
        pass


async def _connected_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with listeners[0]:
        port = listeners[0].socket.getsockname()[1]
        client = await trio.open_tcp_stream("127.0.0.1", port)
        server = await listeners[0].accept()
    return server, client


_GET = b"GET /%d HTTP/1.1\r\nHost: x\r\n\r\n"


async def test_a_request_head_already_on_the_socket_is_read_without_a_deadline() -> None:
    # Request 0 is on the socket before the connection starts; request 1 arrives while
    # request 0 is being answered: both heads are taken as they are, with no deadline
    # (no wait) set up for either. Request 2 comes later: that head is waited for.
    from trimcp.transports.http._h11_conn import H11Connection

    server, client = await _connected_pair()
    ticket = _Ticket()
    waits_before: list[int] = []

    async def app(scope: dict[str, object], receive: object, send: object) -> None:
        n = int(str(scope["path"])[1:])
        waits_before.append(ticket.waits)
        if n == 0:
            await client.send_all(_GET % 1)
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"%d" % n})  # type: ignore[operator]

    async def client_side() -> None:
        await trio.testing.wait_all_tasks_blocked()  # request 2 finds the server waiting
        await client.send_all(_GET % 2)
        await trio.testing.wait_all_tasks_blocked()
        await client.send_eof()

    await client.send_all(_GET % 0)
    connection = H11Connection(
        server,
        app,
        HttpServerLimits(),
        server=None,
        client=None,
        ticket=ticket,  # type: ignore[arg-type]
    )
    async with server, client, trio.open_nursery() as nursery:
        nursery.start_soon(client_side)
        with trio.fail_after(10):
            await connection.run()
    assert waits_before == [0, 0, 1]


async def test_a_head_waited_for_costs_one_empty_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Between two requests the engine tries the socket once (the next head is often
    # there already); found empty, it waits for bytes before it reads again, rather
    # than failing a second read first. Each empty read is a system call and an
    # exception.
    from trimcp.transports import _direct
    from trimcp.transports.http import _h11_conn

    empty: list[int] = []
    real = _direct.read_now

    def counting(stream: trio.abc.ReceiveStream, size: int) -> bytes | None:
        data = real(stream, size)
        if data is None:
            empty.append(1)
        return data

    monkeypatch.setattr(_direct, "read_now", counting)
    monkeypatch.setattr(_h11_conn, "read_now", counting)
    server, client = await _connected_pair()
    served: list[int] = []

    async def app(scope: dict[str, object], receive: object, send: object) -> None:
        served.append(len(empty))
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    async def client_side() -> None:
        for n in (1, 2):
            await trio.testing.wait_all_tasks_blocked()  # the server waits for a head
            await client.send_all(_GET % n)
        await trio.testing.wait_all_tasks_blocked()
        await client.send_eof()

    await client.send_all(_GET % 0)
    connection = _h11_conn.H11Connection(
        server, app, HttpServerLimits(), server=None, client=None, ticket=None
    )
    async with server, client, trio.open_nursery() as nursery:
        nursery.start_soon(client_side)
        with trio.fail_after(10):
            await connection.run()
    # Request 0 was there at once; requests 1 and 2 each found the socket empty once.
    assert served == [0, 1, 2]

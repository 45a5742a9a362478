"""Real servers (serve_http on 127.0.0.1:0, each engine) driven by raw sockets: request smuggling
(B45), a body deadline (B30), and disconnects at every byte of a POST (B46)."""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

import trimcp
from trimcp.transports.http import HttpServerLimits

from ._fixture import make_server

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
).encode()


def post(body: bytes, *extra: str, session: str | None = None) -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        *([f"Mcp-Session-Id: {session}"] if session else []),
        *extra,
    ]
    if not any(e.lower().startswith(("content-length", "transfer-encoding")) for e in extra):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@asynccontextmanager
async def serving(server: trimcp.Server, engine: str, **options: Any) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: trimcp.serve_http(
                server, port=0, engine=engine, task_status=task_status, **options
            )
        )
        yield port
        nursery.cancel_scope.cancel()


async def exchange(port: int, data: bytes, *, timeout: float = 5) -> bytes:
    """Send ``data``, then read until the server closes (or a full response came)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(data)
        received = b""
        with trio.move_on_after(timeout):
            while True:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                received += chunk
                if _complete(received):
                    break
        return received


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


async def test_cl_and_te_together_is_400_and_closed(engine: str) -> None:
    server = make_server()
    async with serving(server, engine) as port:
        body = b"5\r\nhello\r\n0\r\n\r\n"
        smuggled = post(body, "Content-Length: 5", "Transfer-Encoding: chunked")
        reply = await exchange(port, smuggled)
        assert reply.startswith(b"HTTP/1.1 400")
        assert b"connection: close" in reply.lower()
        assert b'"error"' in reply
        # With a second request pipelined behind it, that one is never served (the
        # connection is closed; unread bytes may turn the close into a reset).
        piped = await exchange(port, smuggled + post(INIT))
        assert piped.count(b"HTTP/1.1 ") <= 1
        assert not server.sessions


async def test_conflicting_content_lengths_are_400(engine: str) -> None:
    async with serving(make_server(), engine) as port:
        reply = await exchange(port, post(INIT, "Content-Length: 5", "Content-Length: 6"))
        assert reply.startswith(b"HTTP/1.1 400")


async def test_slow_body_gets_408_and_close(engine: str) -> None:
    limits = HttpServerLimits(body_timeout=0.3)
    async with serving(make_server(), engine, limits=limits) as port:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(post(INIT, "Content-Length: 500")[:-100])
            received = b""
            with trio.fail_after(5):
                while chunk := await stream.receive_some(65536):
                    received += chunk
        assert received.startswith(b"HTTP/1.1 408")


async def _initialize(port: int) -> str:
    reply = await exchange(port, post(INIT))
    assert reply.startswith(b"HTTP/1.1 200"), reply
    for line in reply.split(b"\r\n"):
        if line.lower().startswith(b"mcp-session-id:"):
            return line.split(b":", 1)[1].strip().decode()
    raise AssertionError("no session id")


async def _cut(port: int, data: bytes) -> None:
    sock = trio.socket.socket()
    await sock.connect(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if data:
        await sock.send(data)
    sock.close()  # RST


async def test_disconnect_at_every_byte_of_a_post_never_breaks_the_server(engine: str) -> None:
    server = make_server()
    async with serving(server, engine) as port:
        session = await _initialize(port)
        call = post(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "x"}},
                }
            ).encode(),
            "MCP-Protocol-Version: 2025-11-25",
            session=session,
        )
        with trio.fail_after(60):
            for k in range(len(call)):
                await _cut(port, call[:k])
            for k in range(0, len(INIT) + 150, 7):
                await _cut(port, post(INIT)[:k])
            # let the server finish with every cut connection before counting
            await trio.testing.wait_all_tasks_blocked(cushion=0.05)
        # Every cut initialize that was complete made a session; nothing else did,
        # and the first session is still served.
        full = post(INIT)
        complete_inits = sum(1 for k in range(0, len(INIT) + 150, 7) if k >= len(full))
        # (a reset may discard a complete request before the server reads it)
        assert 1 <= len(server.sessions) <= 1 + complete_inits
        reply = await exchange(port, call)
        assert reply.startswith(b"HTTP/1.1 200")
        assert b'"text":"x"' in reply


async def test_disconnect_mid_request_is_not_cancellation(engine: str) -> None:
    server = make_server()
    async with serving(server, engine) as port:
        session = await _initialize(port)
        call = post(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "wait_release"},
                }
            ).encode(),
            session=session,
        )
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(call)
        with trio.fail_after(5):
            await server.test_state["slow_started"].wait()
        await stream.aclose()  # the client goes away mid-request
        # the server sees the EOF and must keep the request running
        await trio.testing.wait_all_tasks_blocked(cushion=0.05)
        assert not server.test_state["slow_done"].is_set()  # still running
        server.test_state["release"].set()
        with trio.fail_after(5):
            await server.test_state["slow_done"].wait()
        ping = post(b'{"jsonrpc":"2.0","id":4,"method":"ping"}', session=session)
        assert (await exchange(port, ping)).startswith(b"HTTP/1.1 200")


async def test_disconnect_mid_sse_response_at_many_offsets(engine: str) -> None:
    server = make_server()
    async with serving(server, engine) as port:
        session = await _initialize(port)
        with trio.fail_after(30):
            for n, offset in enumerate((1, 40, 150, 400, 1500, 6000)):
                call = post(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": 100 + n,
                            "method": "tools/call",
                            "params": {"name": "flood", "arguments": {"count": 200}},
                        }
                    ).encode(),
                    session=session,
                )
                sock = trio.socket.socket()
                await sock.connect(("127.0.0.1", port))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                await sock.send(call)
                received = b""
                while len(received) < offset:
                    chunk = await sock.recv(offset - len(received))
                    if not chunk:
                        break
                    received += chunk
                sock.close()  # RST in the middle of the stream
        ping = post(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', session=session)
        assert (await exchange(port, ping)).startswith(b"HTTP/1.1 200")
        assert len(server.sessions) == 1


async def test_serve_http_guards_dns_rebinding_on_loopback(engine: str) -> None:
    async with serving(make_server(), engine) as port:
        evil = post(INIT).replace(b"Host: 127.0.0.1", b"Host: evil.example.com")
        assert (await exchange(port, evil)).startswith(b"HTTP/1.1 403")
        fine = post(INIT).replace(b"Host: 127.0.0.1", f"Host: localhost:{port}".encode())
        assert (await exchange(port, fine)).startswith(b"HTTP/1.1 200")

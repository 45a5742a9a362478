"""A raw byte-level peer for a real session over a Trio memory (or lockstep) stream.

The session runs over :class:`trimcp.transports.StreamChannel`, exactly as over stdio;
the test writes raw bytes and reads the NDJSON lines the session writes back, parsed
with the standard ``json`` module (not trimcp's codec, so the two never agree by
accident).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from trimcp.client import Client, open_client
from trimcp.nursery import Session, SessionLimits
from trimcp.server import Server
from trimcp.transports import StreamChannel

#: Bound on any single wait of a test (virtual time under the autojump clock).
WAIT = 120


class BytePeer:
    """The far end of a byte stream: write bytes, read JSON lines."""

    def __init__(
        self, stream: trio.abc.Stream, session: Session | None, channel: StreamChannel | None
    ) -> None:
        self.stream = stream
        self._session = session
        self.channel = channel
        self._buffer = bytearray()
        self._next_ping = 0

    @property
    def session(self) -> Session:
        """The session on the other end (only for a peer facing a served session)."""
        assert self._session is not None, "this peer faces no trimcp session"
        return self._session

    async def write(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def send(self, value: Any) -> None:
        """Write one JSON value as one line."""
        await self.write(json.dumps(value).encode() + b"\n")

    async def read(self) -> dict[str, Any]:
        """The next line the session wrote, parsed."""
        with trio.fail_after(WAIT):
            while b"\n" not in self._buffer:
                data = await self.stream.receive_some(1 << 16)
                if not data:
                    raise EOFError("the session closed its output")
                self._buffer += data
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        value: dict[str, Any] = json.loads(line)
        return value

    async def quiet(self) -> list[bytes]:
        """Settle, then return every complete line written so far (expected: none)."""
        await trio.testing.wait_all_tasks_blocked()
        lines: list[bytes] = []
        while True:
            with trio.move_on_after(0) as scope:
                data = await self.stream.receive_some(1 << 16)
            if scope.cancelled_caught:
                break
            if not data:
                break
            self._buffer += data
        while b"\n" in self._buffer:
            line, _, rest = bytes(self._buffer).partition(b"\n")
            self._buffer = bytearray(rest)
            lines.append(line)
        return lines

    async def request(self, id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.read()

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def initialize(
        self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        reply = await self.request(
            "init",
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "byte-peer", "version": "1"},
            },
        )
        assert reply.get("id") == "init", reply
        assert "result" in reply, reply
        await self.notify("notifications/initialized")
        return reply

    async def assert_alive(self) -> None:
        """The session still answers: a ``ping`` gets its empty result."""
        self._next_ping += 1
        ping_id = f"alive-{self._next_ping}"
        reply = await self.request(ping_id, "ping")
        assert reply == {"jsonrpc": "2.0", "id": ping_id, "result": {}}, reply

    async def call_tool(self, id: Any, name: str, arguments: Any = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request(id, "tools/call", params)


def error_of(reply: dict[str, Any]) -> tuple[Any, int]:
    """``(id, code)`` of an error reply (fails on anything else)."""
    assert set(reply) == {"jsonrpc", "id", "error"}, reply
    assert reply["jsonrpc"] == "2.0"
    return reply["id"], reply["error"]["code"]


@asynccontextmanager
async def byte_session(
    server: Server,
    *,
    initialize: bool = True,
    version: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
    lockstep: bool = False,
    max_line: int | None = None,
) -> AsyncIterator[BytePeer]:
    """Serve ``server`` over a byte stream to a :class:`BytePeer`; hang up on exit.

    On exit the session must end by itself (the peer's EOF) with nothing left in its
    tables.
    """
    pair = trio.testing.lockstep_stream_pair if lockstep else trio.testing.memory_stream_pair
    peer_stream, server_stream = pair()
    kwargs = {} if max_line is None else {"max_line": max_line}
    channel = StreamChannel(server_stream, server_stream, **kwargs)
    async with trio.open_nursery() as nursery:
        session: Session = await nursery.start(server.serve_channel, channel)
        peer = BytePeer(peer_stream, session, channel)
        if initialize:
            await peer.initialize(version, capabilities)
        yield peer
        with trio.fail_after(WAIT):
            await peer_stream.send_stream.aclose()
            await session.wait_closed()
    assert session.in_flight == session.pending == session.background_tasks == 0


@asynccontextmanager
async def client_against_bytes(
    limits: SessionLimits | None = None, *, lockstep: bool = False, **options: Any
) -> AsyncIterator[tuple[Client, BytePeer]]:
    """A real, initialized client over a byte stream, facing a hand-driven server."""
    pair = trio.testing.lockstep_stream_pair if lockstep else trio.testing.memory_stream_pair
    peer_stream, client_stream = pair()

    class Transport:
        @asynccontextmanager
        async def connect(self) -> AsyncIterator[StreamChannel]:
            yield StreamChannel(client_stream, client_stream)

    peer = BytePeer(peer_stream, None, None)
    async with trio.open_nursery() as nursery:
        ready: trio.MemorySendChannel[Any]
        ready, got = trio.open_memory_channel[Any](1)
        done = trio.Event()

        async def run_client() -> None:
            async with open_client(
                Transport(), limits=limits, **options, era="handshake"
            ) as client:
                await ready.send(client)
                await done.wait()

        nursery.start_soon(run_client)
        init = await peer.read()
        assert init["method"] == "initialize"
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": init["id"],
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bytes", "version": "1"},
                },
            }
        )
        assert (await peer.read())["method"] == "notifications/initialized"
        client = await got.receive()
        try:
            yield client, peer
        finally:
            done.set()

"""A burst of pipelined calls against a busy WebSocket session must not starve the
keep-alive: the server reads ahead to the peer's pong (and answers the peer's pings),
and never counts the time its own backpressure kept it from reading against the peer.
In memory, on a mock clock: deterministic and instant."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    CloseConnection,
    Ping,
    Pong,
    TextMessage,
)

import trimcp
from trimcp.transports.websocket import WebSocketChannel, WebSocketLimits, WsprotoMessages

from ._raw import in_memory

BURST = 3000


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


def make_server() -> trimcp.Server:
    server = trimcp.Server("burst", version="1.0")
    release = trio.Event()
    server.test_state = release  # type: ignore[attr-defined]

    @server.tool()
    async def hold(n: int) -> int:
        """Wait until the test releases every call."""
        await release.wait()
        return n

    return server


class Peer:
    """A raw client: writes what the test says, reads everything, answers pings."""

    def __init__(self, stream: trio.abc.Stream, ws: WSConnection) -> None:
        self.stream = stream
        self.ws = ws
        self.lock = trio.StrictFIFOLock()
        self.answers: dict[int, Any] = {}
        self.pings = 0
        self.pongs = 0
        self.closed: int | None = None
        self.changed = trio.Event()
        self.parts: list[str] = []

    async def send(self, *events: Any) -> None:
        async with self.lock:
            await self.stream.send_all(b"".join(self.ws.send(e) for e in events))

    async def read(self) -> None:
        while data := await self.stream.receive_some(65536):
            self.ws.receive_data(data)
            for event in self.ws.events():
                if isinstance(event, Ping):
                    self.pings += 1
                    await self.send(event.response())
                elif isinstance(event, Pong):
                    self.pongs += 1
                elif isinstance(event, TextMessage):
                    self.parts.append(event.data)
                    if event.message_finished:
                        message = json.loads("".join(self.parts))
                        self.parts.clear()
                        if "id" in message:
                            self.answers[message["id"]] = message
                elif isinstance(event, CloseConnection):
                    self.closed = event.code
                self.changed.set()
                self.changed = trio.Event()
        self.closed = self.closed or -1

    async def wait_for(self, count: int) -> None:
        while len(self.answers) < count:
            assert self.closed is None, "the server dropped the connection"
            await self.changed.wait()


@asynccontextmanager
async def connected(
    server: trimcp.Server, limits: WebSocketLimits
) -> AsyncIterator[tuple[Peer, WsprotoMessages]]:
    """The server's side as the lean server runs it (keep-alive and read-ahead beside
    the session), over an in-memory stream pair; the peer already initialized."""
    messages, client, peer_stream = in_memory(limits, ours=ConnectionType.SERVER)
    channel = WebSocketChannel(messages)
    peer = Peer(peer_stream, client)
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            async with trio.open_nursery() as inner:
                inner.start_soon(messages.run)
                await server.serve_channel(channel)
                inner.cancel_scope.cancel()

        nursery.start_soon(serve)
        nursery.start_soon(peer.read)
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "burst", "version": "0"},
        }
        await peer.send(TextMessage(data=json.dumps(rpc(0, "initialize", init))))
        await peer.wait_for(1)
        await peer.send(
            TextMessage(data=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        )
        yield peer, messages
        nursery.cancel_scope.cancel()


def rpc(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def calls(count: int) -> list[TextMessage]:
    return [
        TextMessage(data=json.dumps(rpc(n, "tools/call", {"name": "hold", "arguments": {"n": n}})))
        for n in range(1, count + 1)
    ]


@pytest.mark.parametrize("read_ahead", [1 << 20, 4096])
async def test_a_burst_of_pipelined_calls_does_not_starve_the_keepalive(
    clock: trio.testing.MockClock, read_ahead: int
) -> None:
    """3000 calls in one write, held by their handlers far past the in-flight cap, for
    ten ping intervals. With the default read-ahead the server reads past them to every
    pong (and answers the peer's pings); with a small one it reads a little and waits,
    and never counts that wait against the peer. Either way every call is answered."""
    server = make_server()
    limits = WebSocketLimits(ping_interval=20.0, ping_timeout=20.0, read_ahead=read_ahead)
    async with connected(server, limits) as (peer, _):
        await peer.send(*calls(BURST))
        await peer.send(Ping(payload=b"peer"))  # the peer's own keep-alive, behind them
        await trio.sleep(10 * limits.ping_interval)
        assert peer.closed is None
        if read_ahead > BURST * 150:
            assert peer.pings >= 9  # the server kept pinging, and took the pongs as answers
            assert peer.pongs == 1  # the peer's ping was answered while the calls waited
        else:
            # Its first ping waits for an answer the server cannot read yet, for as long
            # as it cannot: that time is not held against the peer.
            assert peer.pings == 1
        release: trio.Event = server.test_state  # type: ignore[attr-defined]
        release.set()
        with trio.fail_after(60):
            await peer.wait_for(BURST + 1)
        assert all(
            peer.answers[n]["result"]["structuredContent"]["result"] == n for n in (1, BURST)
        )
        assert peer.closed is None


async def test_read_ahead_is_bounded(clock: trio.testing.MockClock) -> None:
    """Read-ahead stops at its bound: the rest waits in the socket (backpressure)."""
    server = make_server()
    limits = WebSocketLimits(ping_interval=None, read_ahead=8192, receive_size=1024)
    async with connected(server, limits) as (peer, messages):
        await peer.send(*calls(BURST))
        await trio.sleep(60)
        assert peer.closed is None
        assert 0 < messages._buffered <= limits.read_ahead + limits.receive_size
        assert len(peer.answers) == 1  # only initialize: every call is still held
        release: trio.Event = server.test_state  # type: ignore[attr-defined]
        release.set()
        with trio.fail_after(60):
            await peer.wait_for(BURST + 1)


async def test_a_peer_that_goes_silent_is_still_dropped(clock: trio.testing.MockClock) -> None:
    """Listening on an empty socket with no answer: the keep-alive drops the peer after
    ``ping_timeout`` seconds of listening, as before."""
    limits = WebSocketLimits(ping_interval=20.0, ping_timeout=5.0)
    messages, _client, peer_stream = in_memory(limits, ours=ConnectionType.SERVER)
    start = trio.current_time()
    await messages.run()  # nobody answers: the read-ahead listens, the keep-alive drops it
    assert trio.current_time() - start == 25.0
    with pytest.raises(trio.ClosedResourceError):
        await messages.receive()
    assert peer_stream.receive_some  # the peer's end: it never reads nor writes

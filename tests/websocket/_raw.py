"""A raw wsproto client for the WebSocket tests: sends exactly what a test says."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    RejectConnection,
    Request,
    TextMessage,
)

from trimcp.transports.websocket import WebSocketLimits, WsprotoMessages

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class RawWebSocket:
    """One raw client connection; ``closed`` holds the server's close code once seen."""

    def __init__(self, stream: trio.SocketStream, ws: WSConnection) -> None:
        self.stream = stream
        self.ws = ws
        self.events: deque[Event] = deque()
        self.closed: int | None = None

    async def _fill(self) -> None:
        data = await self.stream.receive_some(65536)
        if not data:
            raise EOFError
        self.ws.receive_data(data)
        self.events.extend(self.ws.events())

    async def send_text(self, text: str) -> None:
        await self.stream.send_all(self.ws.send(TextMessage(data=text)))

    async def send_bytes(self, data: bytes) -> None:
        await self.stream.send_all(self.ws.send(BytesMessage(data=data)))

    async def send_json(self, value: Any) -> None:
        await self.send_text(json.dumps(value))

    async def receive_json(self) -> Any:
        parts: list[str] = []
        while True:
            while not self.events:
                await self._fill()
            event = self.events.popleft()
            if isinstance(event, TextMessage):
                parts.append(event.data)
                if event.message_finished:
                    return json.loads("".join(parts))
            elif isinstance(event, CloseConnection):
                self.closed = event.code
                raise EOFError(f"closed with {event.code}")

    async def wait_closed(self) -> int:
        while self.closed is None:
            try:
                await self.receive_json()
            except EOFError:
                break
        assert self.closed is not None
        return self.closed


async def handshake(
    port: int,
    *,
    path: str = "/mcp",
    subprotocols: tuple[str, ...] = ("mcp",),
    headers: tuple[tuple[bytes, bytes], ...] = (),
    host: str | None = None,
) -> RawWebSocket | int:
    """Open a connection: the client on acceptance, else the refusal's HTTP status."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    ws = WSConnection(ConnectionType.CLIENT)
    request = Request(
        host=host or f"127.0.0.1:{port}",
        target=path,
        subprotocols=list(subprotocols),
        extra_headers=list(headers),
    )
    await stream.send_all(ws.send(request))
    raw = RawWebSocket(stream, ws)
    while True:
        await raw._fill()
        while raw.events:
            event = raw.events.popleft()
            if isinstance(event, AcceptConnection):
                return raw
            if isinstance(event, RejectConnection):
                await stream.aclose()
                return event.status_code


def in_memory(
    limits: WebSocketLimits,
    *,
    ours: ConnectionType = ConnectionType.CLIENT,
    sockets: bool = False,
) -> tuple[WsprotoMessages, WSConnection, trio.abc.Stream]:
    """An open connection over an in-memory stream pair, past its handshake: our end
    (``ours``: which side) as WsprotoMessages, and the peer's raw wsproto with its stream.
    ``sockets``: over a connected pair of local sockets instead (no network)."""
    our_stream: trio.abc.Stream
    peer_stream: trio.abc.Stream
    if sockets:
        first, second = trio.socket.socketpair()
        our_stream, peer_stream = trio.SocketStream(first), trio.SocketStream(second)
    else:
        our_stream, peer_stream = trio.testing.memory_stream_pair()
    client = WSConnection(ConnectionType.CLIENT)
    server = WSConnection(ConnectionType.SERVER)
    server.receive_data(client.send(Request(host="h", target="/mcp", subprotocols=["mcp"])))
    assert isinstance(next(server.events()), Request)
    client.receive_data(server.send(AcceptConnection(subprotocol="mcp")))
    assert isinstance(next(client.events()), AcceptConnection)
    mine, peer = (client, server) if ours is ConnectionType.CLIENT else (server, client)
    return WsprotoMessages(our_stream, mine, limits), peer, peer_stream

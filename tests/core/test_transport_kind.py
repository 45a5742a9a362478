"""``Client.transport_kind`` names the transport a client is connected over: memory,
stdio (a child process), Streamable HTTP and WebSocket on 127.0.0.1, and ``None`` for a
custom transport's channel. HTTP+SSE (by fallback and explicitly) is checked with the
HTTP client's tests (``tests/http_client/test_legacy_sse.py``)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio

import trimcp
from trimcp.transports import MemoryChannel

from ._support import WAIT, RecordingChannel

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "examples", "demo", "server.py")


def server() -> trimcp.Server:
    made = trimcp.Server("kinds")

    @made.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return made


async def kind_of(transport: Any, **options: Any) -> str | None:
    with trio.fail_after(WAIT):
        async with trimcp.open_client(transport, **options) as client:
            kind = client.transport_kind
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
            assert client.transport_kind == kind  # the same for the whole session
            return kind


@asynccontextmanager
async def listening(serve: Any) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        yield await nursery.start(partial(serve, server(), host="127.0.0.1", port=0))
        nursery.cancel_scope.cancel()


class CustomTransport:
    """A transport of its own: a channel trimcp does not know (forwarding to memory)."""

    def __init__(self, served: trimcp.Server) -> None:
        self.memory = served.in_memory()

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[RecordingChannel]:
        async with self.memory.connect() as channel:
            assert isinstance(channel, MemoryChannel)
            yield RecordingChannel(channel)


async def test_memory_and_a_custom_transport() -> None:
    assert await kind_of(server().in_memory()) == "memory"
    assert await kind_of(server().in_memory(), era="handshake") == "memory"
    assert await kind_of(CustomTransport(server())) is None


async def test_stdio_child_process() -> None:
    command = trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", DEMO)
    assert await kind_of(command, era="handshake") == "stdio"


async def test_streamable_http_in_both_eras_and_websocket() -> None:
    async with listening(trimcp.serve_http) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert await kind_of(trimcp.streamable_http(url)) == "streamable-http"
        assert await kind_of(trimcp.streamable_http(url), era="handshake") == "streamable-http"
    async with listening(trimcp.serve_websocket) as port:
        websocket = trimcp.websocket(f"ws://127.0.0.1:{port}/mcp")
        assert await kind_of(websocket, era="handshake") == "websocket"

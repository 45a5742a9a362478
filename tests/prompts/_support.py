"""Shared tools of the prompts and completion tests: the schema recorder (the suite's
one, from ``tests/core/_schema_check.py``) and a raw peer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from trimcp.server import Server
from trimcp.transports import MemoryChannel, memory_channel_pair
from trimcp.wire import Message, Request

from ..core._schema_check import SchemaCheck as Recorder
from ..core._schema_check import check

__all__ = ["WAIT", "Recorder", "ask", "check", "raw_peer"]

WAIT = 30


@asynccontextmanager
async def raw_peer(server: Server) -> AsyncIterator[MemoryChannel]:
    """Serve ``server`` over a memory pair and yield the hand-driven far end."""
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_channel, server_end)
        try:
            yield client_end
        finally:
            nursery.cancel_scope.cancel()


async def ask(peer: MemoryChannel, id: int, method: str, params: Any = None) -> Message:
    """Send a request and return the reply (which must answer it)."""
    await peer.send(Request(id=id, method=method, params=params))
    with trio.fail_after(WAIT):
        reply = await peer.receive()
    assert getattr(reply, "id", None) == id, reply
    return reply

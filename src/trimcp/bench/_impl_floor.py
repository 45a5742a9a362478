"""The raw floor (:mod:`._floor`) and the lean raw clients driving any server.

* ``floor``: the floor's client (:class:`._ndjson.LineClient`) and server, over Trio
  memory channels carrying JSON lines (memory), over a child process's pipes (stdio),
  or a bare h11 server driven by the raw h11 client (http), or a bare wsproto server
  driven by the raw WebSocket client (websocket, :mod:`._ws`; text frames with
  trimcp's framing helpers, every other frame with wsproto).
* ``floor-hypercorn``: the same raw h11 client, holding as many connections as
  trimcp's client (:func:`client_connections`), against the floor's ASGI app under
  hypercorn's Trio worker (:mod:`._floor_http`), configured as trimcp's hypercorn
  server is: ``trimcp-hypercorn`` against it is trimcp's own cost under hypercorn, it
  against ``floor`` hypercorn's.
* ``raw-trimcp`` / ``raw-sdk``: the raw clients against trimcp's or the SDK's server
  (stdio: NDJSON; http: h11; websocket: wsproto, trimcp only: the SDK has no WebSocket
  server), so their ratio compares the servers alone.
* ``external``: the raw clients against ``--server-command`` or ``--url`` (``ws://``
  URLs on the websocket transport).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from importlib.metadata import version
from typing import Any

import trio

from trimcp.transports import widen_stream

from ._codec import LINES, OBJECTS, Codec
from ._core import TRIMCP_HTTP_CONNECTIONS, Driver, Implementation, Target, Workload
from ._era import ERA_FREE, Unsupported, guard_fanout
from ._floor import FloorServer
from ._h11 import connect_url
from ._ndjson import BUFFER, LineClient, lines_of, writer
from ._process import PeerCpu, ServerProcess, http_server, serve_command
from ._runtimes import trio_runtime
from ._ws import connect_websocket

__all__ = [
    "EXTERNAL",
    "FLOOR",
    "FLOOR_HYPERCORN",
    "FLOOR_OBJECTS",
    "RAW_SDK",
    "RAW_TRIMCP",
    "client_connections",
]


class MemoryDriver:
    """The floor's client and server in one Trio run, joined by memory channels that
    carry JSON lines, or with :data:`._codec.OBJECTS` the message dicts themselves."""

    def __init__(self, codec: Codec = LINES) -> None:
        self.codec = codec

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        to_server, server_inbox = trio.open_memory_channel[Any](BUFFER)
        to_client, client_inbox = trio.open_memory_channel[Any](BUFFER)
        server = FloorServer(to_client.send, self.codec)
        client = LineClient(to_server.send, codec=self.codec)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, _channel_lines(server_inbox))
            nursery.start_soon(client.read, _channel_lines(client_inbox))
            try:
                yield await client.target(workload, ours=True)
            finally:
                nursery.cancel_scope.cancel()


async def _channel_lines(channel: trio.MemoryReceiveChannel[Any]) -> AsyncIterator[Any]:
    async for line in channel:
        yield line


class StdioDriver(PeerCpu):
    """The raw NDJSON client against a server in a child process.

    ``kind`` names a benchmark server (:mod:`._serve`); ``None`` runs the workload's
    ``server_command`` instead (an external server: no benchmark tools).
    """

    def __init__(self, kind: str | None) -> None:
        self.kind = kind

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        if self.kind is not None:
            command = [sys.executable, *serve_command(self.kind, "stdio", workload)]
        elif workload.server_command:
            command = list(workload.server_command)
        else:
            raise ValueError("the external stdio target needs --server-command")
        process = await trio.lowlevel.open_process(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert process.stdin is not None
        assert process.stdout is not None
        self.server = ServerProcess("stdio", process.pid)
        # The pipes trimcp's client makes for its child are as large (the same helper),
        # so the floor is not held back by 64 KiB pipes where trimcp is not.
        widen_stream(process.stdin)
        widen_stream(process.stdout)
        outbox, queued = trio.open_memory_channel[str](BUFFER)
        era = "handshake" if self.kind in ERA_FREE else workload.era
        client = LineClient(outbox.send, era)
        try:
            async with trio.open_nursery() as nursery:
                ended = partial(_why_ended, process)
                nursery.start_soon(_write, process.stdin, queued, client, ended)
                nursery.start_soon(client.read, lines_of(process.stdout), ended)
                if era == "handshake":
                    await client.initialize()
                try:
                    target = await client.target(workload, ours=self.kind is not None)
                    if era != "handshake":
                        target = guard_fanout(target, self.kind, AssertionError)
                    yield target
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await process.stdin.aclose()
                with trio.move_on_after(2):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def _write(
    stream: trio.abc.SendStream,
    queued: trio.MemoryReceiveChannel[str],
    client: LineClient,
    why_ended: Callable[[], Awaitable[str]],
) -> None:
    try:
        await writer(stream, queued)
    except trio.BrokenResourceError:
        client.close(await why_ended())


async def _why_ended(process: trio.Process) -> str:
    """Why a server child stopped answering, for the callers still waiting."""
    with trio.move_on_after(2):
        await process.wait()
    if process.returncode is None:
        return "the server command closed its stdio but is still running"
    return f"the server command exited with status {process.returncode}"


def client_connections(kind: str | None, workload: Workload) -> int | None:
    """The connections the raw h11 client may hold against a ``kind`` server: one per
    caller (``None``), except under hypercorn, where the floor's client holds what
    trimcp's would: hypercorn's CPU per request grows with the connections it serves
    (at 100 callers, about 1.5x with 100 connections against 32), so a client with more
    connections than trimcp's would lower the floor below trimcp."""
    if kind == "floor-hypercorn":
        return workload.connections or TRIMCP_HTTP_CONNECTIONS
    return None


class HttpDriver(PeerCpu):
    """The raw h11 client against a server process of ours, or the workload's URL."""

    def __init__(self, kind: str | None) -> None:
        self.kind = kind

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        if self.kind is None:
            if not workload.url:
                raise ValueError("the external http target needs --url")
            async with connect_url(workload.url, workload, ours=False, era=workload.era) as target:
                yield target
            return
        era = "handshake" if self.kind in ERA_FREE else workload.era
        limit = client_connections(self.kind, workload)
        with http_server(self.kind, workload) as self.server:
            url = self.server.url
            connect = connect_url(url, workload, ours=True, era=era, max_connections=limit)
            async with connect as target:
                yield (
                    guard_fanout(target, self.kind, AssertionError)
                    if era != "handshake"
                    else target
                )


class WebSocketDriver(PeerCpu):
    """The raw WebSocket client against a server process of ours, or the workload's URL."""

    def __init__(self, kind: str | None) -> None:
        self.kind = kind

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        if workload.era != "handshake" and self.kind not in ERA_FREE:
            raise Unsupported("the raw WebSocket client speaks the handshake era only")
        if self.kind is None:
            if not workload.url:
                raise ValueError("the external websocket target needs --url ws://...")
            async with connect_websocket(workload.url, workload, ours=False) as target:
                yield target
            return
        with http_server(self.kind, workload, "websocket") as self.server:
            async with connect_websocket(self.server.url, workload, ours=True) as target:
                yield target


_VERSIONS = {
    "trio": trio.__version__,
    "h11": version("h11"),
    "wsproto": version("wsproto"),
    "codec": LINES.name,
}

FLOOR = Implementation(
    name="floor",
    description="raw floor: JSON lines to a nursery dispatcher, task per request, no MCP "
    "(memory: channels; stdio: pipes; http: bare h11; "
    "websocket: bare wsproto, trimcp's text framing)",
    runtime=trio_runtime(),
    drivers={
        "memory": MemoryDriver,
        "stdio": lambda: StdioDriver("floor"),
        "http": lambda: HttpDriver("floor"),
        "websocket": lambda: WebSocketDriver("floor"),
    },
    versions=_VERSIONS,
)


FLOOR_OBJECTS = Implementation(
    name="floor-objects",
    description="raw floor passing message dicts, no encoding (the memory floor comparable "
    "to trimcp's memory transport, which passes message objects)",
    runtime=trio_runtime(),
    drivers={"memory": lambda: MemoryDriver(OBJECTS)},
    versions={**_VERSIONS, "codec": OBJECTS.name},
)


FLOOR_HYPERCORN = Implementation(
    name="floor-hypercorn",
    description="the floor's ASGI app under hypercorn's Trio worker (trimcp-hypercorn's "
    "configuration), driven by the floor's raw h11 client: hypercorn's own cost",
    runtime=trio_runtime(),
    drivers={"http": lambda: HttpDriver("floor-hypercorn")},
    versions={**_VERSIONS, "hypercorn": version("hypercorn")},
)


def _raw(kind: str, *, websocket: bool = False) -> Implementation:
    drivers: dict[str, Callable[[], Driver]] = {
        "stdio": lambda: StdioDriver(kind),
        "http": lambda: HttpDriver(kind),
    }
    clients = "stdio: NDJSON, http: h11"
    if websocket:
        drivers["websocket"] = lambda: WebSocketDriver(kind)
        clients += ", websocket: wsproto"
    return Implementation(
        name=f"raw-{kind}",
        description=f"lean raw client ({clients}) -> {kind} server process",
        runtime=trio_runtime(),
        drivers=drivers,
        versions=_VERSIONS,
    )


RAW_TRIMCP = _raw("trimcp", websocket=True)
RAW_SDK = _raw("sdk")

EXTERNAL = Implementation(
    name="external",
    description="lean raw client -> --server-command (stdio) or --url (http, websocket)",
    runtime=trio_runtime(),
    drivers={
        "stdio": lambda: StdioDriver(None),
        "http": lambda: HttpDriver(None),
        "websocket": lambda: WebSocketDriver(None),
    },
    versions=_VERSIONS,
)

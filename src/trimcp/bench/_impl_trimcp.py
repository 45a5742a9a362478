"""trimcp: its server and ``open_client`` over memory, stdio, Streamable HTTP and WebSocket.

The benchmark server has four tools: ``echo`` (the throughput call), ``park`` (waits
until cancelled, counting what it observed; with ``sse`` it first sends a
notification, so an HTTP POST answers as an SSE stream instead of one JSON body),
``bench_stats`` (the :class:`._probe.Probe` counters) and ``fanout`` (``n``
concurrent ``sampling/createMessage`` calls). Over stdio and HTTP the server runs in
a process of its own (:mod:`._serve`), the client in the worker; so over WebSocket
(``serve_websocket``, one connection carrying every call).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any, Literal

import trio

from trimcp.client import Client, open_client
from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext, SessionLimits
from trimcp.protocol import CreateMessageParams, CreateMessageResult, TextContent
from trimcp.server import Server, ToolContext
from trimcp.transports import ClientTransport, stdio_command, streamable_http, websocket
from trimcp.wire import JSON_CODEC

from ._core import (
    FANOUT_TOOL,
    PARK_TOOL,
    SSE_TOOL,
    STATS_TOOL,
    TOOL_NAME,
    TRIMCP_HTTP_CONNECTIONS,
    Implementation,
    Target,
    Workload,
    tool_target,
)
from ._era import guard_fanout
from ._probe import Probe, trio_tasks
from ._process import PeerCpu, http_server, serve_command
from ._runtimes import trio_runtime

__all__ = ["HYPERCORN", "IMPLEMENTATION", "JSON_PARK", "make_server"]


def make_server(workload: Workload, *, sse_park: bool = True) -> Server:
    """The benchmark server, its limits raised as ``workload`` asks."""
    limits: dict[str, int] = {}
    if workload.server_max_in_flight is not None:
        limits["max_in_flight"] = workload.server_max_in_flight
    if workload.max_reverse_calls is not None:
        limits["max_reverse_calls"] = workload.max_reverse_calls
    server = Server("bench", "1.0", limits=SessionLimits(**limits) if limits else None)
    probe = Probe(trio_tasks)

    @server.tool(name=TOOL_NAME)
    async def echo(text: str) -> str:
        """Return ``text``."""
        return text

    @server.tool(name=SSE_TOOL)
    async def echo_sse(ctx: ToolContext, text: str) -> str:
        """Log once, then return ``text``: the answer is an SSE stream of two events
        (three with its priming event), each kept in the event store."""
        await ctx.log("info", "echo")
        return text

    @server.tool(name=PARK_TOOL)
    async def park(ctx: ToolContext, sse: bool = sse_park) -> str:
        """Wait until cancelled."""
        probe.enter()
        try:
            if sse:
                await ctx.notify("notifications/message", {"level": "info", "data": "parked"})
            await trio.sleep_forever()
        except trio.Cancelled:
            probe.observed_cancel()
            raise
        finally:
            probe.leave()

    @server.tool(name=STATS_TOOL)
    async def bench_stats(tasks: bool = True) -> str:
        """The server's counters, as JSON (the task count only if ``tasks``)."""
        return json.dumps(probe.snapshot(tasks))

    @server.tool(name=FANOUT_TOOL)
    async def fanout(ctx: ToolContext, n: int) -> str:
        """Issue ``n`` concurrent sampling calls."""
        async with trio.open_nursery() as nursery:
            for _ in range(n):
                nursery.start_soon(lambda: ctx.sample("hi", max_tokens=1))
        return str(n)

    return server


async def _answer_sampling(
    _ctx: HandlerContext, _params: CreateMessageParams
) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="bench")


def _text(result: Any) -> str:
    block = result.content[0]
    return block.text if isinstance(block, TextContent) else ""


async def target_of(client: Client, workload: Workload) -> Target:
    """Check one echo, then return the target (typed calls throughout).

    In the stateless era the fan-out's reverse calls are input rounds; a fan-out the
    server refuses raises :class:`._era.Unsupported` with its error.
    """
    target = await tool_target(client.call_tool, _text, workload)
    return guard_fanout(target, "trimcp", McpError) if client.era.stateless else target


def _client_limits(workload: Workload) -> SessionLimits:
    if workload.cancel_send_timeout is None:
        return SessionLimits()
    return SessionLimits(cancel_send_timeout=workload.cancel_send_timeout)


def _era(workload: Workload) -> Literal["handshake", "stateless"]:
    """The era the client speaks: always the one asked for, never auto-detected (the
    benchmark server speaks both, so detection would pick the stateless one)."""
    return "stateless" if workload.era == "stateless" else "handshake"


@asynccontextmanager
async def connect_target(transport: ClientTransport, workload: Workload) -> AsyncIterator[Target]:
    """``open_client(transport)`` as every driver uses it: the bench's sampling answer,
    the workload's limits and era; yields the checked target."""
    async with open_client(
        transport,
        sampling=_answer_sampling,
        limits=_client_limits(workload),
        era=_era(workload),
    ) as client:
        yield await target_of(client, workload)


class InMemoryDriver:
    """Client and server in one Trio run, joined by trimcp's memory channel pair."""

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        async with connect_target(make_server(workload).in_memory(), workload) as target:
            yield target


class StdioDriver:
    """``open_client(stdio_command(...))`` with the server in a child process."""

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        command = serve_command("trimcp", "stdio", workload)
        async with connect_target(stdio_command(sys.executable, *command), workload) as target:
            yield target


class HttpDriver(PeerCpu):
    """``open_client(streamable_http(url))`` against ``serve_http`` in another process.

    ``kind`` picks the server: ``trimcp`` (the h11 engine, parked calls answered as SSE),
    ``trimcp-json`` (parked calls stay JSON-mode POSTs) or ``trimcp-hypercorn``. The
    client has at most 32 connections (its default) unless the workload asks for more.
    """

    def __init__(self, kind: str = "trimcp") -> None:
        self.kind = kind

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        with http_server(self.kind, workload) as self.server:
            connections = workload.connections or TRIMCP_HTTP_CONNECTIONS
            transport = streamable_http(self.server.url, max_connections=connections)
            async with connect_target(transport, workload) as target:
                yield target


@asynccontextmanager
async def connect_websocket(url: str, workload: Workload) -> AsyncIterator[Target]:
    """``open_client(websocket(url))`` in the workload's era (handshake: ``initialize``,
    reverse calls as requests on the socket; stateless: ``_meta`` per request, reverse
    calls as input rounds)."""
    async with connect_target(websocket(url), workload) as target:
        yield target


class WebSocketDriver(PeerCpu):
    """:func:`connect_websocket` against ``serve_websocket`` in another process."""

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        with http_server("trimcp", workload, "websocket") as self.server:
            async with connect_websocket(self.server.url, workload) as target:
                yield target


_VERSIONS = {"trimcp": version("trimcp"), "trio": trio.__version__, "codec": JSON_CODEC}

IMPLEMENTATION = Implementation(
    name="trimcp",
    description="trimcp Server + open_client, Client.call_tool "
    "(http: h11 engine; websocket: serve_websocket)",
    runtime=trio_runtime(),
    drivers={
        "memory": InMemoryDriver,
        "stdio": StdioDriver,
        "http": HttpDriver,
        "websocket": WebSocketDriver,
    },
    versions=_VERSIONS,
)

HYPERCORN = Implementation(
    name="trimcp-hypercorn",
    description="trimcp serve_http(engine='hypercorn') + open_client",
    runtime=trio_runtime(),
    drivers={"http": lambda: HttpDriver("trimcp-hypercorn")},
    versions={**_VERSIONS, "hypercorn": version("hypercorn")},
)

JSON_PARK = Implementation(
    name="trimcp-json",
    description="trimcp over http, parked calls in JSON response mode (no SSE)",
    runtime=trio_runtime(),
    drivers={"http": lambda: HttpDriver("trimcp-json")},
    versions=_VERSIONS,
    metrics=("parked",),
)

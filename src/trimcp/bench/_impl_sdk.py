"""The official MCP Python SDK (``mcp``): ``MCPServer`` and ``mcp.client.Client``.

``mode="legacy"`` is the SDK's handshake-era path, like trimcp's client: in memory its
``InMemoryTransport`` runs the server over a pair of anyio memory streams carrying
``SessionMessage`` objects through the JSON-RPC dispatcher (message objects, no
encoding, a session on each end, the same shape as trimcp's memory pair); over stdio
it starts the server as a child process; over HTTP it is the SDK's httpx client
against its server under uvicorn in another process (:mod:`._serve`), answering with
SSE (``sdk``) or with JSON bodies (``sdk-json``). In the stateless era (``--era
stateless``) the client is ``mode="2026-07-28"``: in memory a direct dispatcher pair into
the server's per-request path, over stdio and HTTP the same processes, the server
answering each request on its own. It has no WebSocket transport (the report says so,
see ``absent``). The SDK is an optional install:
importing this module fails without it, and the worker reports that.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning, NoBackChannelError

from ._core import (
    FANOUT_TOOL,
    PARK_TOOL,
    STATS_TOOL,
    TOOL_NAME,
    Implementation,
    Target,
    Workload,
    tool_target,
)
from ._era import DEFAULT_ERA, guard_fanout, sdk_mode
from ._gc import passed_on
from ._probe import Probe, asyncio_tasks
from ._process import PeerCpu, http_server, serve_command
from ._runtimes import asyncio_runtime

__all__ = ["IMPLEMENTATION", "JSON_MODE", "make_server"]

# Sampling, which the SDK marks deprecated from 2026-07-28 on, is what the fan-out
# measures (in the handshake era that still has it): a process running the SDK's
# server or client here does not warn each time it makes a call.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)


def make_server() -> MCPServer:
    """The benchmark server: unstructured tools (text content only). It logs warnings
    only, as every benchmark server does (a line per session would land in the middle
    of the report)."""
    server = MCPServer("bench", log_level="WARNING")
    probe = Probe(asyncio_tasks)

    @server.tool(name=TOOL_NAME, structured_output=False)
    async def echo(text: str) -> str:
        """Return ``text``."""
        return text

    @server.tool(name=PARK_TOOL, structured_output=False)
    async def park() -> str:
        """Wait until cancelled."""
        probe.enter()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            probe.observed_cancel()
            raise
        finally:
            probe.leave()
        return "unreachable"

    @server.tool(name=STATS_TOOL, structured_output=False)
    async def bench_stats(tasks: bool = True) -> str:
        """The server's counters, as JSON (the task count only if ``tasks``)."""
        return json.dumps(probe.snapshot(tasks))

    @server.tool(name=FANOUT_TOOL, structured_output=False)
    async def fanout(n: int, ctx: Context) -> str:
        """Issue ``n`` concurrent sampling calls."""
        from mcp.types import SamplingMessage, TextContent

        messages = [SamplingMessage(role="user", content=TextContent(type="text", text="hi"))]
        session: Any = ctx.session

        async def one() -> None:
            await session.create_message(messages, max_tokens=1)

        try:
            async with anyio.create_task_group() as group:
                for _ in range(n):
                    group.start_soon(one)
        except BaseExceptionGroup as exc:
            # In 2026-07-28 mode the SDK's server has no back channel: the expected
            # refusal, answered as a tool error (the SDK logs a traceback for anything
            # else a tool raises, in the middle of the report).
            if exc.split(NoBackChannelError)[1] is not None:
                raise
            raise ToolError("no back channel for sampling in this mode") from None
        return str(n)

    return server


async def _answer_sampling(context: Any, params: Any) -> Any:
    from mcp.types import CreateMessageResult, TextContent

    return CreateMessageResult(
        role="assistant", content=TextContent(type="text", text="ok"), model="bench"
    )


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def _target(client: Client, workload: Workload) -> Target:
    """Check one echo, then return the target.

    In 2026-07-28 mode the SDK's server has no server-to-client requests: the fan-out
    tool's ``session.create_message`` raises ``NoBackChannelError`` (its handlers must
    build an ``InputRequiredResult`` themselves), so the fan-out is unsupported.
    """
    target = await tool_target(client.call_tool, _text, workload)
    return guard_fanout(target, "sdk", AssertionError) if workload.era != DEFAULT_ERA else target


def _client(server: Any, workload: Workload) -> Client:
    mode = sdk_mode(workload.era)
    return Client(server, mode=mode, sampling_callback=_answer_sampling)


class InMemoryDriver:
    """Client and server in one asyncio loop, over the SDK's in-memory streams."""

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        async with _client(make_server(), workload) as client:
            yield await _target(client, workload)


class StdioDriver:
    """The SDK's client starting the SDK's server as a child process."""

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        command = serve_command("sdk", "stdio", workload)
        parameters = StdioServerParameters(command=sys.executable, args=command, env=passed_on())
        async with _client(parameters, workload) as client:
            yield await _target(client, workload)


class HttpDriver(PeerCpu):
    """The SDK's Streamable HTTP client against its server in another process.

    With ``workload.connections`` (the parked metric) it gets an httpx client allowed
    that many connections; otherwise the SDK's own default client.
    """

    def __init__(self, kind: str = "sdk") -> None:
        self.kind = kind

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        with http_server(self.kind, workload) as self.server:
            if workload.connections is None:
                async with _client(self.server.url, workload) as client:
                    yield await _target(client, workload)
                return
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            limits = httpx2.Limits(max_connections=workload.connections + 8)
            timeout = httpx2.Timeout(30.0, read=300.0)
            async with httpx2.AsyncClient(limits=limits, timeout=timeout) as http:
                transport = streamable_http_client(self.server.url, http_client=http)
                async with _client(transport, workload) as client:
                    yield await _target(client, workload)


_VERSIONS = {"mcp": version("mcp"), "anyio": version("anyio"), "uvicorn": version("uvicorn")}


def _websocket_absent() -> str:
    """Why there is no SDK WebSocket run: looked up, not assumed (mcp 1.x had one)."""
    if importlib.util.find_spec("mcp.client.websocket") is None:
        return f"mcp {version('mcp')} has no WebSocket client or server"
    return f"mcp {version('mcp')} has mcp.client.websocket, which no driver here uses yet"


IMPLEMENTATION = Implementation(
    name="sdk",
    description="mcp SDK MCPServer + Client(mode='legacy'; stateless era: '2026-07-28') "
    "(http: uvicorn, SSE answers)",
    runtime=asyncio_runtime(),
    drivers={"memory": InMemoryDriver, "stdio": StdioDriver, "http": HttpDriver},
    versions=_VERSIONS,
    absent={"websocket": _websocket_absent()},
)

JSON_MODE = Implementation(
    name="sdk-json",
    description="mcp SDK over http with json_response=True (JSON bodies, no SSE)",
    runtime=asyncio_runtime(),
    drivers={"http": lambda: HttpDriver("sdk-json")},
    versions=_VERSIONS,
)

"""The official MCP Python SDK: ``MCPServer`` + ``mcp.client.Client`` in process.

``mode="legacy"`` is the SDK's handshake-era path: its ``InMemoryTransport`` runs the
server over a pair of anyio memory streams carrying ``SessionMessage`` objects through
the JSON-RPC dispatcher, the same shape as trimcp's memory pair (message objects, no
encoding, a session on each end). ``sdk-direct`` measures its newer direct path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

from mcp.client import Client
from mcp.server.mcpserver import MCPServer

from benchmarks.core import TOOL_NAME, Caller, Implementation, Workload, check_echo
from benchmarks.impls.http_process import PeerCpu, http_server
from benchmarks.runtimes import asyncio_runtime


def make_server() -> MCPServer:
    """The benchmark server: one unstructured ``echo`` tool (text content only)."""
    server = MCPServer("bench")

    @server.tool(structured_output=False)
    async def echo(text: str) -> str:
        """Return ``text``."""
        return text

    return server


class InMemoryDriver:
    """Client and server in one asyncio loop, connected by the SDK's in-process path."""

    def __init__(self, *, mode: str = "legacy") -> None:
        self.mode = mode

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Caller]:
        async with Client(make_server(), mode=self.mode) as client:
            yield await _caller(client, workload)


class HttpDriver(PeerCpu):
    """The SDK's Streamable HTTP client (``Client(url)``) against its server, under
    uvicorn in another process (:mod:`benchmarks.http_server`).

    ``mode="legacy"`` (the initialize handshake) like trimcp's client, so both speak
    the same protocol era to their servers.
    """

    def __init__(self, *, mode: str = "legacy") -> None:
        self.mode = mode

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Caller]:
        with http_server("sdk", workload) as self.server:
            async with Client(self.server.url, mode=self.mode) as client:
                yield await _caller(client, workload)


async def _caller(client: Client, workload: Workload) -> Caller:
    """Check one echo, then return the per-call closure."""
    text = workload.text
    arguments = {"text": text}
    first = await client.call_tool(TOOL_NAME, arguments)
    check_echo(first.content[0].text, text)  # type: ignore[union-attr]
    call_tool = client.call_tool

    async def call() -> None:
        if (await call_tool(TOOL_NAME, arguments)).is_error:
            raise AssertionError("tool failed")

    return call


IMPLEMENTATION = Implementation(
    name="sdk",
    description="mcp SDK MCPServer + Client(mode='legacy'), in-memory streams",
    runtime=asyncio_runtime(),
    drivers={"memory": InMemoryDriver, "http": HttpDriver},
    versions={"mcp": version("mcp"), "anyio": version("anyio"), "uvicorn": version("uvicorn")},
)

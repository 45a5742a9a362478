"""trimcp: ``open_client`` over ``Server.in_memory()`` or Streamable HTTP, ``Client.call_tool``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

import trio

import trimcp
from benchmarks.core import TOOL_NAME, Caller, Implementation, Workload, check_echo
from benchmarks.impls.http_process import PeerCpu, http_server
from benchmarks.runtimes import trio_runtime
from trimcp.nursery import SessionLimits


def make_server(workload: Workload) -> trimcp.Server:
    """The benchmark server: one ``echo`` tool, limits from the workload."""
    limits = (
        SessionLimits(max_in_flight=workload.server_max_in_flight)
        if workload.server_max_in_flight is not None
        else None
    )
    server = trimcp.Server("bench", "1.0", limits=limits)

    @server.tool()
    async def echo(text: str) -> str:
        """Return ``text``."""
        return text

    return server


class InMemoryDriver:
    """Client and server in one Trio run, joined by trimcp's memory channel pair.

    ``raw`` calls ``Client.request("tools/call")`` and skips turning the answer into a
    ``CallToolResult``, to measure what that conversion costs.
    """

    def __init__(self, *, raw: bool = False) -> None:
        self.raw = raw

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Caller]:
        async with trimcp.open_client(make_server(workload).in_memory()) as client:
            yield await _caller(client, workload, raw=self.raw)


class HttpDriver(PeerCpu):
    """trimcp's Streamable HTTP client against ``trimcp.serve_http`` in another process.

    The client is the plain ``open_client(streamable_http(url))``, its defaults kept
    (``max_connections=32``: at 100 callers, requests queue for a connection).
    """

    def __init__(self, *, raw: bool = False) -> None:
        self.raw = raw

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Caller]:
        with http_server("trimcp", workload) as self.server:
            async with trimcp.open_client(trimcp.streamable_http(self.server.url)) as client:
                yield await _caller(client, workload, raw=self.raw)


async def _caller(client: trimcp.Client, workload: Workload, *, raw: bool) -> Caller:
    """Check one echo, then return the per-call closure (typed or raw)."""
    text = workload.text
    arguments = {"text": text}
    first = await client.call_tool(TOOL_NAME, arguments)
    check_echo(first.content[0].text, text)  # type: ignore[union-attr]
    if raw:
        request = client.request
        params = {"name": TOOL_NAME, "arguments": arguments}

        async def call() -> None:
            if "isError" in await request("tools/call", params):
                raise AssertionError("tool failed")

        return call
    call_tool = client.call_tool

    async def typed_call() -> None:
        if (await call_tool(TOOL_NAME, arguments)).is_error:
            raise AssertionError("tool failed")

    return typed_call


IMPLEMENTATION = Implementation(
    name="trimcp",
    description="trimcp Server.in_memory() + open_client, Client.call_tool",
    runtime=trio_runtime(),
    drivers={"memory": InMemoryDriver, "http": HttpDriver},
    versions={"trimcp": version("trimcp"), "trio": trio.__version__},
)

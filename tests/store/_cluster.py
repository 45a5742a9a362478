"""Several "processes" in one Trio run: one ``Server`` and one ``RedisStore`` (so one
process number, lease and relay channel) each, on one real redis-server, driven
in-process through their ASGI apps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

import trimcp
from trimcp.store import RedisStore
from trimcp.transports.http import HttpServerLimits, StreamableHttpApp

from ..http_server._asgi import AsgiClient


def make_server(state: dict[str, Any], name: str) -> trimcp.Server:
    """The same server in every process; ``state`` is what the test shares with the
    tools (in real life, whatever they touch)."""
    server = trimcp.Server("cluster-test", version="1.0")

    @server.tool()
    async def where() -> str:
        """Which process served the call."""
        return name

    async def ask_name(ctx: trimcp.ToolContext) -> str:
        result, content = await ctx.elicit(
            "name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"{name} got {result.action}: {content}"

    @server.tool()
    async def form(ctx: trimcp.ToolContext) -> str:
        """Ask the user (a reverse call), then say who asked."""
        return await ask_name(ctx)

    @server.tool()
    async def poll(ctx: trimcp.ToolContext) -> str:
        """Log, close the SSE stream, then finish once the test releases it."""
        await ctx.log("info", "before close")
        await trimcp.close_sse_stream(ctx, retry_ms=50)
        await state["release"].wait()
        await ctx.log("info", "after close")
        return f"finished on {name}"

    @server.tool()
    async def hold(ctx: trimcp.ToolContext) -> str:
        """Log, then wait until cancelled or released."""
        await ctx.log("info", "holding")
        state.setdefault("held", trio.Event()).set()
        try:
            await state["release"].wait()
        except trio.Cancelled:
            state["cancelled_on"] = name
            state.setdefault("cancelled", trio.Event()).set()
            raise
        return "released"

    @server.tool(task_support="optional")
    async def slow_task() -> str:
        """Runs as a task until the test releases it."""
        state.setdefault("task_started", trio.Event()).set()
        try:
            await state["release"].wait()
        except trio.Cancelled:
            state["cancelled_on"] = name
            state.setdefault("cancelled", trio.Event()).set()
            raise
        return f"done on {name}"

    @server.tool(task_support="optional")
    async def ask_task(ctx: trimcp.ToolContext) -> str:
        """Runs as a task that asks the user (an input request)."""
        return await ask_name(ctx)

    @server.tool()
    async def chatty(ctx: trimcp.ToolContext) -> str:
        """Log at two levels."""
        await ctx.log("debug", "quiet")
        await ctx.log("warning", "loud")
        return "ok"

    return server


class Cluster:
    """``count`` processes sharing one redis prefix; :meth:`session` opens a session."""

    def __init__(
        self, apps: list[StreamableHttpApp], servers: list[trimcp.Server], nursery: trio.Nursery
    ) -> None:
        self.apps = apps
        self.servers = servers
        self.nursery = nursery

    async def session(self, process: int = 0) -> AsgiClient:
        """A client with a session initialized on ``process``."""
        client = AsgiClient(self.apps[process], self.nursery)
        await client.initialize()
        return client

    def stores(self) -> list[RedisStore]:
        return [s.store for s in self.servers]  # type: ignore[misc]


@asynccontextmanager
async def cluster(
    url: str,
    prefix: str,
    count: int = 2,
    *,
    lease_ttl: float = 5.0,
    limits: HttpServerLimits | None = None,
) -> AsyncIterator[tuple[Cluster, dict[str, Any]]]:
    state: dict[str, Any] = {"release": trio.Event()}
    servers = []
    apps = []
    for n in range(count):
        store = RedisStore(url, prefix=prefix, lease_ttl=lease_ttl, op_timeout=1.0)
        server = make_server(state, f"p{n}")
        servers.append(server)
        apps.append(trimcp.asgi_app(server, store=store, limits=limits or HttpServerLimits()))
    async with trio.open_nursery() as nursery:
        for app in apps:
            await nursery.start(app.run)
        yield Cluster(apps, servers, nursery), state
        nursery.cancel_scope.cancel()


def on(client: AsgiClient, app: StreamableHttpApp) -> AsgiClient:
    """``client``'s session, driven through ``app`` from now on."""
    client.app = app
    return client

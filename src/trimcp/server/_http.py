"""Serve a :class:`Server` over Streamable HTTP: as an ASGI app, or with hypercorn.

:func:`asgi_app` builds the app for mounting in any Trio ASGI server; :func:`serve_http`
runs it under hypercorn's Trio worker and reports the bound port, so
``port = await nursery.start(serve_http, server)`` works with ``port=0``.
:func:`close_sse_stream` lets a handler end its request's SSE response early (SSE
polling); the client resumes with ``Last-Event-ID`` and gets the rest, result included.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import trio

from trimcp.nursery import HandlerContext
from trimcp.transports.http import (
    HostPolicy,
    HttpSessionChannel,
    StreamableHttpApp,
    is_loopback,
)

from ._context import ToolContext
from ._server import Server

__all__ = ["asgi_app", "close_sse_stream", "serve_http"]

logger = logging.getLogger("trimcp.server")

DEFAULT_HTTP_PORT = 8000


def asgi_app(server: Server, **options: Any) -> StreamableHttpApp:
    """The Streamable HTTP ASGI app of ``server``.

    ``options`` are those of :class:`~trimcp.transports.http.StreamableHttpApp`
    (``path``, ``limits``, ``host_policy``, ``stateless``, ``event_store``,
    ``standalone_get``, and ``legacy_sse``/``sse_path``/``messages_path`` for the
    2024-11-05 HTTP+SSE transport, on by default at ``/sse``). The app runs its
    sessions under ASGI lifespan, or in the nursery of whoever calls ``await app.run()``.
    """
    options.setdefault("supported_versions", server.supported_versions)
    return StreamableHttpApp(server.serve_channel, **options)


async def serve_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_HTTP_PORT,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Serve ``server`` on ``http://host:port/mcp`` (and HTTP+SSE on ``/sse``) until cancelled.

    ``task_status.started()`` reports the bound port (useful with ``port=0``). The
    DNS-rebinding guard is on; bound to loopback it checks ``Host`` and ``Origin``
    against loopback names. Binding elsewhere without an explicit ``host_policy`` logs a
    warning. Further ``options`` go to :func:`asgi_app`; ``hypercorn_config`` may give a
    ready :class:`hypercorn.config.Config` (its ``bind`` is replaced).
    """
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config: Config = options.pop("hypercorn_config", None) or Config()
    bind_host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    config.bind = [f"{bind_host}:{port}"]
    config.accesslog = None
    config.graceful_timeout = min(config.graceful_timeout, 3.0)
    if "host_policy" not in options:
        loopback = is_loopback(host)
        if not loopback:
            logger.warning(
                "serving MCP on %s without a host_policy: only Origin is checked; "
                "put authentication in front of it",
                host,
            )
        # Bound elsewhere, requests that still arrive on a loopback address are checked.
        options["host_policy"] = HostPolicy(loopback=True if loopback else None)
    app = asgi_app(server, **options)
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        binds: list[str] = await nursery.start(_serve_hypercorn, serve, app, config)
        bound = int(binds[0].rsplit(":", 1)[1]) if binds else port
        task_status.started(bound)
        await trio.sleep(math.inf)


async def _serve_hypercorn(
    serve: Any,
    app: StreamableHttpApp,
    config: Any,
    *,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    await serve(app, config, shutdown_trigger=trio.sleep_forever, task_status=task_status)


async def close_sse_stream(
    ctx: ToolContext | HandlerContext, *, retry_ms: int | None = None
) -> bool:
    """End the HTTP response of ``ctx``'s request now; the request keeps running.

    The client reconnects (``GET`` with ``Last-Event-ID``, after ``retry_ms``) and gets
    everything the request sends afterwards, its result included. Returns ``False``
    when there is no such stream to close: not on Streamable HTTP, no event store, or
    the request was already answered.
    """
    handler = ctx.handler if isinstance(ctx, ToolContext) else ctx
    channel = handler.session_object.channel
    if not isinstance(channel, HttpSessionChannel):
        return False
    return await channel.close_request_stream(handler.request_id, retry_ms=retry_ms)

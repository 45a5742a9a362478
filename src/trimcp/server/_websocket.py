"""Serve a :class:`Server` over WebSocket on a lean wsproto server.

``port = await nursery.start(serve_websocket, server)`` listens on
``ws://host:port/mcp`` and serves one session per connection until cancelled. For an
ASGI deployment instead, the app of :func:`~trimcp.asgi_app` accepts WebSocket
connections on its endpoint path (``serve_http(engine="hypercorn")`` does that).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial

import trio

from trimcp.transports.http import HostPolicy
from trimcp.transports.websocket import (
    WebSocketChannel,
    WebSocketLimits,
    accept_with_caller,
    serve_until_expiry,
)
from trimcp.transports.websocket._accept import refuse

from ._http import host_policy_for
from ._lifespan import Serving
from ._server import Server

__all__ = ["DEFAULT_WEBSOCKET_PORT", "serve_websocket"]

logger = logging.getLogger("trimcp.server")

DEFAULT_WEBSOCKET_PORT = 8765


async def serve_websocket(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_WEBSOCKET_PORT,
    path: str = "/mcp",
    limits: WebSocketLimits | None = None,
    host_policy: HostPolicy | None = None,
    allowed_hosts: Iterable[str] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` on ``ws://host:port{path}`` until cancelled or shut down.

    ``task_status.started()`` reports the bound port (``port=0`` picks a free one).
    Bounds are in ``limits``: past ``max_connections`` a new client is refused with 503.
    The DNS-rebinding guard is on, as for :func:`~trimcp.serve_http` (``allowed_hosts``
    or ``host_policy``): bound to loopback, ``Host`` and ``Origin`` must name loopback;
    elsewhere ``Host`` must be an IP literal or an allowed host. A server made with
    ``auth=`` verifies each handshake's credentials (401 with the challenge otherwise)
    and closes a connection (1008) when they expire. Cancellation ends every
    session and closes every connection. ``await server.shutdown()`` stops it
    gracefully: no new connection is accepted, running requests get their grace, and
    this function returns once every connection has ended.
    """
    limits = limits or WebSocketLimits()
    policy = host_policy_for(host, host_policy, allowed_hosts, what="WebSocket")
    active = 0

    async def handle(stream: trio.SocketStream, serving: Serving) -> None:
        nonlocal active
        if active >= limits.max_connections:
            await refuse(stream, None, 503, "too many WebSocket connections; retry later")
            return
        active += 1
        try:
            try:
                local = str(stream.socket.getsockname()[0])
            except OSError:  # gone before it was served
                await trio.aclose_forcefully(stream)
                return
            accepted = await accept_with_caller(
                stream,
                path=path,
                host_policy=policy,
                local_host=local,
                local_port=bound,
                limits=limits,
                auth=server.auth_gate,
            )
            if accepted is None:
                return
            messages, caller = accepted
            channel = WebSocketChannel(messages, caller=caller)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(messages.run)
                    await serve_until_expiry(
                        partial(server.serve_channel, tasks=task_host, serving=serving),
                        channel,
                    )
                    nursery.cancel_scope.cancel()
            finally:
                await channel.aclose()
        finally:
            active -= 1

    shutdown = server.shutdown_control.round
    task_host = server.tasks.host()  # every connection's tasks end with this serving
    async with server.serving() as serving, trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(port, host=host)
        bound: int = listeners[0].socket.getsockname()[1]
        await nursery.start(task_host.run)
        async with trio.open_nursery() as connections:
            accepting = trio.CancelScope()

            async def accept(task_status: trio.TaskStatus[object]) -> None:
                # serve_listeners closes each listener as it stops accepting.
                with accepting:
                    await trio.serve_listeners(
                        partial(handle, serving=serving),
                        listeners,
                        handler_nursery=connections,
                        task_status=task_status,
                    )

            await connections.start(accept)
            task_status.started(bound)
            await shutdown.requested.wait()
            accepting.cancel()
            # The shutdown closes every session; each connection then ends by itself.
        nursery.cancel_scope.cancel()

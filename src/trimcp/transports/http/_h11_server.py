"""A lean HTTP/1.1 server for an ASGI app: h11 over Trio TCP listeners.

:func:`serve_h11` binds, reports the bound port through ``task_status``, then accepts
connections until cancelled; each connection is one task running an
:class:`~._h11_conn.H11Connection` (see there for the per-request path). It serves what
the Streamable HTTP app needs of an ASGI server and nothing else: HTTP/1.1 (and 1.0)
only, no TLS, no lifespan (the caller runs the app's sessions); WebSocket upgrades go to
the app as ASGI ``websocket`` scopes (:mod:`._h11_websocket`).

At most ``limits.max_connections`` connections are served at once, kept by a
:class:`~._connections.ConnectionTable`: at the cap, a connection that is still waiting
for a request head gives way to the newcomer; when none is, new connections wait in the
kernel's listen backlog (``BACKLOG``). Under pressure, head deadlines shrink and a
client over its connection budget is turned away with 503 (see there). Cancellation is
the shutdown: the listeners close, every connection's task is cancelled and its socket
closed, and no error escapes for a request that was in progress.
"""

from __future__ import annotations

import errno
import logging
from typing import Any, Final

import trio

from ._connections import ConnectionTable, Ticket, turn_away
from ._fairness import address_key
from ._h11_conn import AsgiApp, H11Connection
from ._server_limits import HttpServerLimits

__all__ = ["BACKLOG", "serve_h11"]

logger = logging.getLogger("trimcp.http.h11")

#: The listen backlog (the kernel caps it at ``net.core.somaxconn``). Bursts of
#: connections are normal for MCP over HTTP: a client giving up many calls at once sends
#: a ``notifications/cancelled`` POST for each, on fresh connections. Past the backlog
#: the kernel drops SYNs and the client retries a second or more later, longer than a
#: client's bounded cancel send waits (hypercorn's default of 100 lost most of them
#: with a few hundred calls cancelled at once).
BACKLOG: Final = 1024
#: ``accept`` failures that mean "out of resources for now": wait, then go on (as
#: ``trio.serve_listeners`` does).
_RETRY_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
_RETRY_SECONDS: Final = 0.1


async def serve_h11(
    app: AsgiApp,
    *,
    host: str,
    port: int,
    limits: HttpServerLimits,
    table: ConnectionTable | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled; ``task_status`` gets the port.

    With ``port=0`` and a host name that resolves to several addresses, only the first
    address is served (each listener would get a different free port otherwise).
    ``table`` keeps the connections (default: a new one; pass one to watch it).
    """
    listeners = await trio.open_tcp_listeners(port, host=host, backlog=BACKLOG)
    if port == 0 and len(listeners) > 1:
        for extra in listeners[1:]:
            await extra.aclose()
        listeners = listeners[:1]
    bound = int(listeners[0].socket.getsockname()[1])
    table = table or ConnectionTable(limits)
    try:
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(_accept_loop, listener, app, table, nursery)
            task_status.started(bound)
    finally:
        for listener in listeners:
            with trio.CancelScope(shield=True):
                await listener.aclose()


async def _accept_loop(
    listener: trio.SocketListener,
    app: AsgiApp,
    table: ConnectionTable,
    nursery: trio.Nursery,
) -> None:
    # The last addresses seen, reused when the next connection's are equal (the local
    # one nearly always is; a client's host often): each connection keeps them for its
    # life, so connections that repeat them keep one copy.
    last_server: tuple[str, int] | None = None
    last_host = ""
    while True:
        try:
            stream = await listener.accept()
        except OSError as exc:
            if exc.errno not in _RETRY_ERRNOS:
                raise
            logger.error("accept failed (%s); retrying in %s s", exc, _RETRY_SECONDS)
            await trio.sleep(_RETRY_SECONDS)
            continue
        try:
            await table.make_room()
            server = _address(stream.socket.getsockname())
            client = _address(stream.socket.getpeername())
            if server == last_server:
                server = last_server
            last_server = server
            if client is not None:
                if client[0] == last_host:
                    client = (last_host, client[1])
                last_host = client[0]
        except OSError:
            await trio.aclose_forcefully(stream)  # gone before it was served
            continue
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        ticket = table.admit(address_key(client[0]) if client else "address:?")
        if ticket is None:
            nursery.start_soon(turn_away, table, stream)
        else:
            nursery.start_soon(_serve_connection, stream, app, table.limits, ticket, server, client)


def _address(value: Any) -> tuple[str, int] | None:
    if isinstance(value, tuple) and len(value) >= 2:
        return str(value[0]), int(value[1])
    return None


async def _serve_connection(
    stream: trio.SocketStream,
    app: AsgiApp,
    limits: HttpServerLimits,
    ticket: Ticket,
    server: tuple[str, int] | None,
    client: tuple[str, int] | None,
) -> None:
    try:
        connection = H11Connection(stream, app, limits, server=server, client=client, ticket=ticket)
        try:
            if await connection.run():
                await connection.linger()
        except Exception:
            logger.exception("HTTP connection from %s failed", client)
    finally:
        ticket.release()
        await stream.aclose()

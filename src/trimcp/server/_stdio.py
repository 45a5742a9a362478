"""Serve a :class:`Server` over this process's stdin and stdout."""

from __future__ import annotations

import trio

from trimcp.nursery import Session
from trimcp.transports import open_stdio_channel

from ._server import Server

__all__ = ["serve_stdio"]


async def serve_stdio(
    server: Server, *, task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve one session on stdin/stdout; return promptly once stdin closes, or once
    ``server.shutdown()`` has ended the session (see :mod:`trimcp.server._shutdown`).
    The server's ``lifespan`` is entered first and exited last.

    ``await nursery.start(serve_stdio, server)`` returns once the session is running.
    """
    host = server.tasks.host()  # tasks outlive their requests, not this serving
    async with (
        server.serving() as serving,
        trio.open_nursery() as nursery,
        open_stdio_channel() as channel,
    ):
        await nursery.start(host.run)
        await server.serve_channel(channel, tasks=host, serving=serving, task_status=task_status)
        nursery.cancel_scope.cancel()

"""Where tasks run: the task nursery of one *serving* of a server.

A task outlives the request that created it, so it cannot run in the request's scope;
it must not run in some session's nursery either, since a session's life has nothing to
do with the task's (design invariant 13). It runs in a :class:`TaskHost`: a nursery
that lives exactly as long as one ``serve_*`` of the server (``serve_http``'s app,
``serve_stdio``, ``serve_websocket``, one ``server.in_memory()`` connection). Every
session a serving starts is bound to that serving's host
(``Server.serve_channel(channel, tasks=host)``), and a task created by a request of
the session runs there: it ends with the serving that carried its request, never with
another one. Two in-memory clients of one server each have their own host, so one
disconnecting leaves the other's tasks running.

Code that serves channels by other means (calling ``serve_channel`` without a host)
runs ``server.tasks.run`` around its sessions; their tasks go to the newest such run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import final

import trio

from trimcp.dispatch import McpError
from trimcp.wire import INTERNAL_ERROR

__all__ = ["TaskHost", "not_served"]


def not_served() -> McpError:
    """The error of a task that has no serving to run in."""
    return McpError(
        INTERNAL_ERROR,
        "Internal error: tasks are not being served (run the server with serve_http, "
        "serve_stdio or serve_websocket, or start server.tasks.run)",
    )


@final
class TaskHost:
    """The task nursery of one serving; see the module doc."""

    __slots__ = ("_nursery", "_running")

    def __init__(self, running: list[TaskHost] | None = None) -> None:
        self._nursery: trio.Nursery | None = None
        #: Where this host lists itself while it runs (its store's hosts).
        self._running = running if running is not None else []

    @property
    def running(self) -> bool:
        """Whether :meth:`run` is serving tasks now."""
        return self._nursery is not None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run tasks until cancelled; every task started here ends with it."""
        if self._nursery is not None:
            raise RuntimeError("this TaskHost is already running")
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._running.append(self)
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._running.remove(self)
                self._nursery = None

    def spawn(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Start ``fn`` here (``-32603`` when this host is not running)."""
        if self._nursery is None:
            raise not_served()
        self._nursery.start_soon(fn)

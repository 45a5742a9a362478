"""A server's lifespan: state set up once per serving, reachable from every handler.

``Server(lifespan=fn)`` takes ``fn(server)``, an async context manager (typically an
``@asynccontextmanager`` function). It is entered once per *serving*: each ``serve_*``
function (``serve_stdio``, ``serve_http``, ``serve_websocket``), each ASGI app run
(under ASGI lifespan or ``app.run()``), ``trimcp serve``, and each in-memory connection
(``server.in_memory()``). It is entered before the first session is accepted and exited
after the last one has ended; what it yields is ``ctx.lifespan_state`` in every tool,
resource and prompt of that serving (and in work they detach or hand to the tasks
extension)::

    @asynccontextmanager
    async def lifespan(server):
        async with open_database() as db:
            yield db

    server = trimcp.Server("demo", lifespan=lifespan)

    @server.tool()
    async def count(ctx: trimcp.ToolContext) -> int:
        return await ctx.lifespan_state.count()

A failure while entering ends the ``serve_*`` call with that error, before anything is
served. The exit runs shielded from cancellation for at most
:data:`LIFESPAN_EXIT_TIMEOUT` seconds, so its cleanup runs even when the serving was
cancelled (a second Ctrl-C, say).

The state travels in a context variable set around each session, so the tasks of a
session (and only they) see their serving's state, even when several servings of one
server run at once.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, final

import attrs
import trio

__all__ = ["LIFESPAN_EXIT_TIMEOUT", "Lifespan", "Serving", "current_serving", "run_lifespan"]

Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
"""``lifespan(server)``: an async context manager whose value is the lifespan state."""

LIFESPAN_EXIT_TIMEOUT: Final = 10.0
"""Seconds the lifespan's exit may take, shielded from cancellation."""


@final
@attrs.define
class Serving:
    """One serving lifetime of a server: what its lifespan yielded."""

    state: Any = None


_CURRENT: Final = contextvars.ContextVar[Serving | None]("trimcp_serving", default=None)


def current_serving() -> Serving | None:
    """The serving whose session runs the current task, if any."""
    return _CURRENT.get()


@asynccontextmanager
async def run_lifespan(lifespan: Lifespan | None, server: object) -> AsyncIterator[Serving]:
    """Enter *lifespan* (if any) for one serving of *server*; see the module doc."""
    serving = Serving()
    if lifespan is None:
        yield serving
        return
    manager = lifespan(server)
    serving.state = await manager.__aenter__()
    try:
        yield serving
    except BaseException as exc:
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + LIFESPAN_EXIT_TIMEOUT
            if await manager.__aexit__(type(exc), exc, exc.__traceback__):
                return
        raise
    else:
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + LIFESPAN_EXIT_TIMEOUT
            await manager.__aexit__(None, None, None)


@asynccontextmanager
async def in_serving(serving: Serving | None) -> AsyncIterator[None]:
    """Make *serving* the current one for the tasks started inside (a session's)."""
    if serving is None:
        yield
        return
    token = _CURRENT.set(serving)
    try:
        yield
    finally:
        _CURRENT.reset(token)

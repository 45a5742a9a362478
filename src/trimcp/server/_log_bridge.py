"""Stdlib :mod:`logging` inside a handler, forwarded to the client as
``notifications/message``.

:class:`McpLogHandler` is an ordinary :class:`logging.Handler`: attach it to any logger
(``logging.getLogger("myapp").addHandler(trimcp.McpLogHandler())``) and a record emitted
while a server handler runs reaches the client that made that request, at the level
that client's session set with ``logging/setLevel`` (unset: every level in the
handshake era, none in the stateless era). The record's level maps with
:meth:`~trimcp.protocol.LoggingLevel.from_python`, the logger name becomes ``logger``,
and ``data`` is the formatted message.

Routing is by context, not by logger: every request handler of a :class:`~trimcp.Server`
starts under :func:`log_routed`, which sets a :class:`contextvars.ContextVar` to the
request's :class:`~trimcp.nursery.HandlerContext` in the request's own task (Trio gives
each task its own copy of the context, so nothing needs resetting). Trio copies context
into child tasks, so records from tasks the handler starts, or from work it detached
with ``detach_for_background``, still find the session they came from, and two
concurrent requests never see each other's records. A record emitted outside any
request, or from a worker thread, is not forwarded (the handler's other handlers still
see it). The request's :class:`LogRoute` is made by its first forwarded record and kept
as ``ctx.log_route``, so a request that logs nothing allocates nothing for logging.

``emit`` is synchronous, so records wait in the route's buffer, bounded by
``buffer_size`` (default :data:`DEFAULT_LOG_BUFFER`); when it is full the oldest record
is dropped and counted, and one ``warning`` message tells the client how many were lost.
A background task of the session drains the buffer while the request runs, and the
request drains what is left itself before its response, so every message it logged
precedes its answer on the same stream. Once the request is over, records from its
detached work go out as session notifications (related to no request).
"""

from __future__ import annotations

import collections
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

import trio

from trimcp.dispatch import ConnectionClosedError
from trimcp.nursery import BackgroundContext, HandlerContext
from trimcp.protocol import LoggingLevel

from ._context import log_level_allows

__all__ = ["DEFAULT_LOG_BUFFER", "LogRoute", "McpLogHandler", "log_routed"]

#: Records one request may hold before they are sent; the oldest are dropped beyond it.
DEFAULT_LOG_BUFFER: Final = 256

Handler = Callable[[HandlerContext, Any], Awaitable[Any]]

_current: contextvars.ContextVar[HandlerContext | None] = contextvars.ContextVar(
    "trimcp_log_request", default=None
)


@final
class LogRoute:
    """Where the log records of one request go, and the ones waiting to go there."""

    __slots__ = ("_buffer", "_draining", "_idle", "ctx", "dropped")

    def __init__(self, ctx: HandlerContext) -> None:
        self.ctx = ctx
        #: Records lost to a full buffer since the last drain.
        self.dropped = 0
        #: Created on the first record and dropped once drained (an empty deque still
        #: holds a block of 64 slots, for as long as the request runs).
        self._buffer: collections.deque[dict[str, Any]] | None = None
        self._draining = False
        self._idle: trio.Event | None = None

    @property
    def open(self) -> bool:
        """The request is still running (its messages travel with it)."""
        return not self.ctx.closed

    def push(self, params: dict[str, Any], limit: int) -> None:
        """Queue one message (synchronous; called from ``emit``)."""
        buffer = self._buffer
        if buffer is None:
            buffer = self._buffer = collections.deque()
        if len(buffer) >= limit:
            buffer.popleft()
            self.dropped += 1
        buffer.append(params)
        if not self._draining:
            self._draining = True
            self._idle = trio.Event()
            session = self.ctx.session_object
            try:
                # The engine's own helper, one per route at a time: not counted against
                # max_background (it is bounded by the requests and work that log).
                session.spawn_background(
                    self._drain_task, BackgroundContext(session, None), counted=False
                )
            except ConnectionClosedError:
                self._buffer = None
                self._draining = False
                self._idle.set()

    async def _drain_task(self, _ctx: BackgroundContext) -> None:
        try:
            await self.drain()
        finally:
            self._draining = False
            if self._idle is not None:
                self._idle.set()

    async def finish(self) -> None:
        """Send what is queued and wait for a drain under way, so that every message of
        the request goes out before its response."""
        await self.drain()
        if self._idle is not None:
            await self._idle.wait()

    async def drain(self) -> None:
        """Send every queued message (and the dropped-records notice, if any)."""
        session = self.ctx.session_object
        while self._buffer or self.dropped:
            buffer = self._buffer
            if buffer:
                params = buffer.popleft()
            else:
                params = {
                    "level": "warning",
                    "logger": "trimcp",
                    "data": f"{self.dropped} log records were dropped (buffer full)",
                }
                self.dropped = 0
            related = self.ctx.request_id if self.open else None
            try:
                await session.notify("notifications/message", params, related=related)
            except ConnectionClosedError:
                self._buffer = None
                self.dropped = 0
                return
        self._buffer = None


def log_routed(handler: Handler) -> Handler:
    """Wrap a request handler so log records emitted while it runs are routed to its
    session (see the module doc). The wrapper is a plain function returning the
    handler's awaitable: it adds no frame to a running request."""

    def run(ctx: HandlerContext, params: Any) -> Awaitable[Any]:
        _current.set(ctx)
        return handler(ctx, params)

    return run


class McpLogHandler(logging.Handler):
    """A :class:`logging.Handler` that sends records to the client of the current
    request (see the module doc).

    Args:
      level: the handler's own threshold (the client's ``logging/setLevel`` applies too).
      buffer_size: records one request may queue before the oldest are dropped.
    """

    def __init__(self, level: int = logging.NOTSET, *, buffer_size: int = DEFAULT_LOG_BUFFER):
        super().__init__(level)
        if buffer_size < 1:
            raise ValueError("buffer_size must be at least 1")
        self.buffer_size = buffer_size

    def emit(self, record: logging.LogRecord) -> None:
        ctx = _current.get()
        if ctx is None or not _in_trio():
            return
        level = LoggingLevel.from_python(record.levelno).value
        if not log_level_allows(ctx.session, level):
            return
        try:
            data = self.format(record)
        except Exception:
            self.handleError(record)
            return
        route = ctx.log_route
        if route is None:
            route = ctx.log_route = LogRoute(ctx)
        assert isinstance(route, LogRoute)
        route.push({"level": level, "logger": record.name, "data": data}, self.buffer_size)


def _in_trio() -> bool:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True

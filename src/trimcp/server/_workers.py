"""Worker threads for handlers written as plain ``def``.

A tool, resource or prompt may be a plain function; it then runs in a worker thread
(``trio.to_thread.run_sync``) so that its blocking work never stalls the event loop. The
threads of one server are bounded by one :class:`trio.CapacityLimiter`
(``Server(worker_threads=...)``, default :data:`DEFAULT_WORKER_THREADS`); calls beyond it
wait for a thread in their request's task, where cancellation reaches them.

Cancellation: a thread cannot be interrupted, so a cancelled request stops waiting at
once (``abandon_on_cancel``; it gets no response, as any cancelled request) while its
thread runs on to the end, keeping its limiter slot until then. A long function can stop
early by calling ``trio.from_thread.check_cancelled()`` now and then, and can reach its
context's async methods with ``trio.from_thread.run(ctx.report_progress, ...)``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, final

import trio

from trimcp.binding import is_async_callable

__all__ = ["DEFAULT_WORKER_THREADS", "WorkerThreads"]

T = TypeVar("T")

DEFAULT_WORKER_THREADS: Final = 16
"""Plain-``def`` handlers of one server running at once (each in its own thread)."""


@final
class WorkerThreads:
    """The bounded worker threads of one server."""

    def __init__(self, limit: int = DEFAULT_WORKER_THREADS) -> None:
        if limit < 1:
            raise ValueError(f"worker_threads must be at least 1, got {limit}")
        self.limiter = trio.CapacityLimiter(limit)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` in a worker thread (see the module doc)."""
        return await trio.to_thread.run_sync(fn, limiter=self.limiter, abandon_on_cancel=True)

    def call(self, fn: Callable[..., Any], /, **kwargs: Any) -> Awaitable[Any]:
        """``fn(**kwargs)`` to await: called directly when it is async, else in a thread."""
        if is_async_callable(fn):
            return fn(**kwargs)  # type: ignore[no-any-return]
        return self.run(functools.partial(fn, **kwargs))

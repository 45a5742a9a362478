"""Keep errors readable at the public API (design invariant 9)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from trimcp.dispatch import McpError, single_error

__all__ = ["SERVER_BUSY", "BackgroundLimitError", "unwrap_single"]

#: The error code of work refused because a session's bound was reached (the
#: implementation-defined server error of JSON-RPC 2.0).
SERVER_BUSY: Final = -32000


@contextmanager
def unwrap_single() -> Iterator[None]:
    """Re-raise a nursery's ExceptionGroup as its one real error, when it has one.

    Cancellations that rode along are dropped: a scope that is still cancelled delivers
    :class:`trio.Cancelled` again at the next checkpoint, so nothing is lost. Groups with
    several real errors stay groups, since no single one of them is the story.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        real = single_error(group)
        if real is not None:
            # Keep the error's own explicit cause; only the group context is dropped.
            raise real from real.__cause__
        raise


class BackgroundLimitError(McpError):
    """A session already runs ``max_background`` detached tasks (``-32000``).

    Raised by ``detach_for_background`` instead of starting one more: work a peer can
    make a server detach once per request must not grow without bound. A handler that
    lets it propagate answers its request with this error.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(
            SERVER_BUSY,
            f"Server busy: {limit} detached tasks (max_background) are running in this session",
        )
        self.limit = limit

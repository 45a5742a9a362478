"""Keep errors readable at the public API (design invariant 9)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from trimcp.dispatch import single_error

__all__ = ["unwrap_single"]


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

"""Keep errors readable at the public API (design invariant 9)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import trio

__all__ = ["unwrap_single"]


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


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
        real = [exc for exc in _leaves(group) if not isinstance(exc, trio.Cancelled)]
        if len(real) == 1:
            # Keep the error's own explicit cause; only the group context is dropped.
            raise real[0] from real[0].__cause__
        raise

"""The one rule of the HTTP layers' small tables of values kept for reuse.

The client's checked request heads, its per-session header tuples and the server's
shared request header pairs each keep what repeats, so that the next request finds it
made. Each table is bounded by emptying it when full, not by evicting one entry: what
a peer sends again refills it at once, a peer sending ever new values cannot make it
hold more, and a hit costs one ``dict`` lookup with no bookkeeping.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["keep"]

K = TypeVar("K")
V = TypeVar("V")


def keep(table: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store ``value`` under ``key`` in ``table``, emptied first when it holds ``limit``
    entries already; returns ``value``."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value

"""Request header pairs shared between requests (the h11 engine's ASGI scopes).

A request parked in its handler keeps its scope's headers for as long as it waits: a
``(name, value)`` tuple and its two byte strings per header, some 150 bytes each. Yet a
client sends the same few pairs on every request (``host``, ``accept``,
``content-type``, its session id and protocol version ...). :func:`shared_pairs` hands
out one tuple per distinct pair instead, so a thousand parked requests keep one copy.

Only the headers named in :data:`SHARED_NAMES` are shared, and only short values
(:data:`SHARED_VALUE_BYTES`): never credentials (``authorization``, ``cookie``), which
must not outlive their request. At most :data:`SHARED_PAIRS` are kept; when full the
table is emptied and refills from the next requests, so a client sending ever new
values cannot make the server hold more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any, Final

from ._bounded_table import keep

__all__ = ["SHARED_NAMES", "SHARED_PAIRS", "SHARED_VALUE_BYTES", "lower_pairs", "shared_pairs"]

#: Header names (lower case) whose pairs are shared.
SHARED_NAMES: Final = frozenset(
    {
        b"accept",
        b"accept-encoding",
        b"connection",
        b"content-length",
        b"content-type",
        b"host",
        b"mcp-method",
        b"mcp-name",
        b"mcp-protocol-version",
        b"mcp-session-id",
        b"user-agent",
    }
)
#: The longest value shared.
SHARED_VALUE_BYTES: Final = 256
#: The most pairs kept at once.
SHARED_PAIRS: Final = 256

_pairs: dict[tuple[bytes, bytes], tuple[bytes, bytes]] = {}


_NAME: Final = itemgetter(1)
_VALUE: Final = itemgetter(2)


def lower_pairs(headers: Iterable[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, bytes]]:
    """The ``(lower-case name, value)`` pairs of h11's ``headers``, made at C speed.

    Iterating h11's ``Headers`` runs the ``Sequence`` mixin's generator and a
    ``__getitem__`` per header, Python calls each; its list of ``(raw name, name,
    value)`` triples is zipped here instead. Anything else (or an h11 that keeps its
    headers differently) is iterated as it is.
    """
    full: Any = getattr(headers, "_full_items", None)
    if type(full) is list:
        return zip(map(_NAME, full), map(_VALUE, full), strict=True)
    return iter(headers)


def shared_pairs(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` as a new list whose pairs are shared where they may be (see above);
    names as given (lower case from h11)."""
    pairs = _pairs
    out = []
    for pair in lower_pairs(headers):
        kept = pairs.get(pair)
        if kept is None:
            kept = pair
            if pair[0] in SHARED_NAMES and len(pair[1]) <= SHARED_VALUE_BYTES:
                keep(pairs, pair, pair, SHARED_PAIRS)
        out.append(kept)
    return out

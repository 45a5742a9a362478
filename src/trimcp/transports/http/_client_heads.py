"""Request heads validated once, not per request.

h11 checks every header name and value against the RFC 9110 grammar each time an
``h11.Request`` is built: on the client's hot path, a POST per call whose headers are the
same from one call to the next (content type, accept, session id, protocol version), that
check cost more than the rest of the request's serialisation. :class:`RequestHeads`
builds and checks each distinct head once through h11 itself and keeps two things:

* the head's bytes as h11 writes them, up to (not including) the ``Content-Length`` line
  of a request with a body, and
* a stand-in event for the connection's h11 state machine: the same method, target and
  headers with ``Content-Length: 0``. Sending it and ``EndOfMessage`` moves h11 exactly
  as the real request would (it frames the *response* by the request's method and
  connection headers only), so h11 still parses every response and decides reuse.

The bytes on the wire are then the checked head, ``Content-Length: <n>``, the blank line
and the body: the request h11 would have written. At most ``limit`` heads are kept per
pool (a head that changes per request, such as one carrying a proof of possession,
just passes through); past that the table starts again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

import h11

from ._bounded_table import keep

__all__ = ["END_OF_MESSAGE", "RequestHeads"]

#: Shared (events are immutable): every exchange ends its request with it.
END_OF_MESSAGE = h11.EndOfMessage()

_LENGTH_ZERO = b"Content-Length: 0\r\n\r\n"

_Key = tuple[object, ...]


@final
class RequestHeads:
    """Checked request heads by method, target, authority and headers (see module doc)."""

    __slots__ = ("_heads", "_limit")

    def __init__(self, limit: int = 64) -> None:
        self._heads: dict[_Key, tuple[h11.Request, bytes]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._heads)

    def get(
        self,
        method: str,
        target: str,
        authority: str,
        headers: Sequence[tuple[str, str]],
        framed: bool,
    ) -> tuple[h11.Request, bytes]:
        """The stand-in event and the head's bytes (without the ``Content-Length`` line
        and blank line when ``framed``). Raises :class:`h11.LocalProtocolError` for a
        head h11 would not send."""
        key = (method, target, authority, framed, *headers)
        head = self._heads.get(key)
        if head is not None:
            return head
        all_headers = [("Host", authority), *headers]
        if framed:
            all_headers.append(("Content-Length", "0"))
        event = h11.Request(method=method, target=target, headers=all_headers)
        data = h11.Connection(h11.CLIENT).send(event)
        assert data is not None
        if framed:
            # h11 writes the headers in the order given, Host first: the length is last.
            assert data.endswith(_LENGTH_ZERO)
            data = data[: -len(_LENGTH_ZERO)]
        return keep(self._heads, key, (event, data), self._limit)

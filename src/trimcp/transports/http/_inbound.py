"""The inbound budget: bytes of request bodies being received, per client and in all.

``max_body_size`` bounds one body, but a server reads many at once: a thousand
connections trickling 4 MiB bodies would hold 4 GiB before any of them is decoded. So a
body's bytes are counted while it is received, against the client's budget
(``inbound_client_bytes``: one address, an IPv6 /64, or one authenticated caller) inside
the server's (``inbound_total_bytes``). A body that does not fit is refused with 503 and
``Retry-After`` and its connection closed; its bytes go back at once. Nothing waits for
room: a client over its own share is refused while others go on, and only many clients
at once can fill the server's budget.

The bytes go back when the body has been read (or refused, or its client has gone):
what happens to a read body is bounded by the session's queues.
"""

from __future__ import annotations

from typing import Final, final

from ._budget import ByteBudget
from ._guards import SERVER_ERROR, HttpError

__all__ = ["BUSY", "BodyReservation", "InboundBudget"]

#: The message of a body refused for the inbound budget.
BUSY: Final = "Server busy: too many request bytes being received; retry later"


@final
class BodyReservation:
    """The bytes one body being received holds (see :meth:`InboundBudget.receiving`):
    a context manager that gives them back, and lets go of its client's budget, when
    the body is read. A plain class rather than a generator: every request makes one."""

    __slots__ = ("_budget", "_client", "_inbound", "_retry_after", "held")

    def __init__(self, inbound: InboundBudget, client: str | None) -> None:
        self._inbound = inbound
        self._client = client
        self._budget = inbound.total  # the client's own once entered
        self._retry_after = inbound.retry_after
        self.held = 0

    def __enter__(self) -> BodyReservation:
        self._budget = self._inbound.join(self._client)
        return self

    def __exit__(self, *_exc: object) -> None:
        self._budget.give(self.held)
        self.held = 0
        self._inbound.leave(self._client)

    def take(self, size: int) -> None:
        """Hold ``size`` more bytes; :class:`HttpError` 503 (connection closed) if they
        fit in neither the client's nor the server's budget."""
        if not self._budget.take(size):
            raise _busy(self._retry_after)
        self.held += size


def _busy(retry_after: int) -> HttpError:
    retry = str(retry_after).encode()
    return HttpError(503, BUSY, code=SERVER_ERROR, headers=[(b"retry-after", retry)], close=True)


@final
class InboundBudget:
    """Budgets of the bodies being received, one per client inside the server's.

    A client's budget exists while one of its bodies is being received (so the table
    holds at most one entry per connection)."""

    __slots__ = ("_clients", "_users", "client_limit", "retry_after", "total")

    def __init__(self, total: int, per_client: int, retry_after: int = 1) -> None:
        self.total = ByteBudget(total)
        self.client_limit = per_client
        self.retry_after = retry_after
        self._clients: dict[str | None, ByteBudget] = {}
        self._users: dict[str | None, int] = {}

    @property
    def used(self) -> int:
        """Bytes held by bodies being received, in all."""
        return self.total.used

    def held_by(self, client: str | None) -> int:
        """Bytes held by ``client``'s bodies being received."""
        budget = self._clients.get(client)
        return 0 if budget is None else budget.used

    def receiving(self, client: str | None) -> BodyReservation:
        """Count a body of ``client`` (``None``: a client without a known address or
        identity; those share one budget) while the ``with`` block receives it."""
        return BodyReservation(self, client)

    def check(self, client: str | None, size: int) -> None:
        """503, as :meth:`BodyReservation.take` would say it, unless a body of ``size``
        bytes fits in ``client``'s budget and the server's now: for a body received
        whole already, whose bytes would be taken and given back at once."""
        held = self.held_by(client)
        total = self.total
        if held + size > self.client_limit or total.used + size > total.limit:
            raise _busy(self.retry_after)

    def join(self, client: str | None) -> ByteBudget:
        """``client``'s budget, made for its first body being received."""
        budget = self._clients.get(client)
        if budget is None:
            budget = self._clients[client] = ByteBudget(self.client_limit, self.total)
        self._users[client] = self._users.get(client, 0) + 1
        return budget

    def leave(self, client: str | None) -> None:
        """A body of ``client`` is read; its budget goes with its last one."""
        users = self._users[client] - 1
        if users:
            self._users[client] = users
        else:
            del self._users[client]
            self._clients.pop(client).close()

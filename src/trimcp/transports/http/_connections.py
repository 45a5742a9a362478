"""The connections of the h11 engine: a cap, per-client budgets, and what gives way.

Slow clients attack a connection cap by holding connections that never become
requests (slowloris: a request head dribbled in, or nothing at all). The table keeps
that from locking anyone out:

* **Shedding.** A connection waiting for a request head (a new one, or an idle
  keep-alive one) is cheap to drop: nothing of a request has been accepted yet. When
  the table is full and a new connection arrives, the waiting connection of the client
  holding the most waiting connections, the oldest of its, is dropped (408 when its
  head had begun, else a plain close) and the newcomer takes its place. Connections
  serving a request are never shed.
* **Pressure.** Once ``pressure`` of ``max_connections`` are in use, the keep-alive and
  head deadlines of connections that start waiting shrink in proportion, down to
  ``pressure_timeout`` when the table is full; and a client already holding
  ``max_connections_per_client`` connections has new ones turned away with 503 (a
  few at a time, each written and closed within a second). Below ``pressure`` nothing
  is refused: one client may use the whole table while nobody else needs it.

A client is its address (an IPv6 /64), as in :mod:`._fairness`: connections come
before any request, so there is no principal yet.
"""

from __future__ import annotations

import json
from collections import Counter
from operator import attrgetter
from typing import Final, final

import trio

from ._fairness import oldest_of_heaviest
from ._server_limits import HttpServerLimits

__all__ = ["ConnectionTable", "Ticket", "turn_away"]

#: Connections being turned away (503) at once; past it they are closed unanswered.
MAX_TURNING_AWAY: Final = 64
#: How long writing a 503 to a connection turned away and closing it may take.
TURN_AWAY_SECONDS: Final = 1.0


def _busy_response() -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": "Service Unavailable: too many connections from this client",
            },
        },
        separators=(",", ":"),
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


_BUSY: Final = _busy_response()


@final
class Ticket:
    """One connection's place in the table, from accept to close."""

    __slots__ = ("_scope", "_table", "key", "released", "shed")

    def __init__(self, table: ConnectionTable, key: str) -> None:
        self._table = table
        self.key = key
        self._scope: trio.CancelScope | None = None
        #: The table dropped this connection to make room.
        self.shed = False
        self.released = False

    def timeout(self, *, began: bool) -> float:
        """The deadline for a request head: ``header_timeout`` once its first byte came,
        else ``keep_alive_timeout``; both shorter under pressure."""
        limits = self._table.limits
        return self._table.scaled(limits.header_timeout if began else limits.keep_alive_timeout)

    def waiting(self, scope: trio.CancelScope) -> None:
        """The connection waits for a request head in ``scope``: it may be shed."""
        if not self.released:
            self._scope = scope
            self._table._waiting[self] = None

    def working(self) -> None:
        """The connection serves a request: it is never shed."""
        self._scope = None
        self._table._waiting.pop(self, None)

    def drop(self) -> None:
        """Shed this waiting connection: its head wait ends now, its slot is free."""
        scope = self._scope
        self.shed = True
        self.release()
        if scope is not None:
            scope.cancel()

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        self.working()
        self._table._release(self.key)


@final
class ConnectionTable:
    """The live connections of one h11 server (see the module doc)."""

    def __init__(self, limits: HttpServerLimits) -> None:
        self.limits = limits
        self.active = 0
        #: Connections shed to make room, and turned away over a client's budget.
        self.shed = 0
        self.turned_away = 0
        self.turning_away = 0
        self._clients: Counter[str] = Counter()
        self._waiting: dict[Ticket, None] = {}
        self._room = trio.Event()

    @property
    def under_pressure(self) -> bool:
        return self.active >= self.limits.pressure * self.limits.max_connections

    def scaled(self, seconds: float) -> float:
        """``seconds``, shrunk in proportion to the load past ``pressure``."""
        limits = self.limits
        load = self.active / limits.max_connections
        if load <= limits.pressure:
            return seconds
        left = max(0.0, (1.0 - load) / (1.0 - limits.pressure))
        return max(min(seconds, limits.pressure_timeout), seconds * left)

    def clients(self, key: str) -> int:
        return self._clients[key]

    async def make_room(self) -> None:
        """Return once a new connection fits: at once below the cap; at the cap, after
        shedding a waiting connection, or once one ends."""
        while self.active >= self.limits.max_connections:
            if self._shed_one():
                continue
            self._room = trio.Event()
            await self._room.wait()

    def admit(self, key: str) -> Ticket | None:
        """A ticket for a new connection from ``key``; ``None`` when it must be turned
        away (under pressure, over its client's budget)."""
        if self.under_pressure and self._clients[key] >= self.limits.max_connections_per_client:
            self.turned_away += 1
            return None
        self.active += 1
        self._clients[key] += 1
        return Ticket(self, key)

    def _shed_one(self) -> bool:
        victim = oldest_of_heaviest(self._waiting, attrgetter("key"))
        if victim is None:
            return False
        self.shed += 1
        victim.drop()
        return True

    def _release(self, key: str) -> None:
        self.active -= 1
        self._clients[key] -= 1
        if not self._clients[key]:
            del self._clients[key]
        self._room.set()


async def turn_away(table: ConnectionTable, stream: trio.SocketStream) -> None:
    """Answer 503 without reading the request, and close (bounded in time and number)."""
    if table.turning_away >= MAX_TURNING_AWAY:
        await trio.aclose_forcefully(stream)
        return
    table.turning_away += 1
    try:
        with trio.move_on_after(TURN_AWAY_SECONDS):
            await stream.send_all(_BUSY)
            await stream.send_eof()
            # Drain what the client sent, so that closing does not reset the answer.
            while await stream.receive_some(65536):
                pass
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass
    finally:
        table.turning_away -= 1
        await trio.aclose_forcefully(stream)

"""Slots: at most ``total`` holders at once, handed on in arrival order.

Three bounds of a session work this way: its pending table (outbound calls), its
in-flight bound (inbound requests being handled) and the HTTP client's connection pool.
Each is a counter and a parking lot instead of a :class:`trio.Semaphore`, whose
``acquire`` takes a scheduler round even with a slot free, and whose ``acquire`` and
``release`` are Python calls more on every request: those paths have checkpoints of
their own (a send, a wait for the answer), so a free slot is taken at once.

A slot given back while others wait passes straight to the one waiting longest: it
is never counted free in between, so a newcomer never takes a waiter's turn, and a
waiter is woken holding its slot. A waiter cancelled before it was woken takes none
(the lot forgets it). Callers that must give a slot back although they were woken with
one (the table closed meanwhile) call :meth:`release` like any holder.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import final

import trio

__all__ = ["Slots"]


@final
class Slots:
    """At most ``total`` holders (see the module doc).

    A holder takes a slot with :meth:`take_nowait` (no checkpoint: the caller has its
    own) or, when none is free, ``await slots.wait()``; ``free`` is the number of
    slots free now, and a hot path may take one inline (``if slots.free: slots.free
    -= 1``, a call fewer). Every slot taken is given back once with :meth:`release`.
    """

    __slots__ = ("_lot", "free")

    def __init__(self, total: int) -> None:
        self.free = total
        self._lot = trio.lowlevel.ParkingLot()

    def take_nowait(self) -> bool:
        """Take a free slot if there is one (no checkpoint); whether one was taken."""
        if self.free:
            self.free -= 1
            return True
        return False

    def wait(self) -> Awaitable[None]:
        """Wait for a slot; return holding it. A plain function handing back the lot's
        wait: a waiter keeps no frame of this class."""
        return self._lot.park()

    def release(self) -> None:
        """Give a slot back: to the holder waiting longest, else to the free count."""
        if self.free or not self._lot:
            self.free += 1
        else:
            self._lot.unpark()

    @property
    def waiting(self) -> bool:
        """Whether holders wait for a slot now."""
        return bool(self._lot)

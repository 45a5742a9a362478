"""Coalesced writes: many senders, one byte stream, one write per burst.

Used by the NDJSON streams (stdio) and the WebSocket connection. A sender hands its
encoded bytes to :meth:`WriteBatcher.submit`; they are queued in call order, and
whoever then holds the write lock writes everything queued by then in one call. A
sender whose bytes went out with an earlier batch returns at once; a sender cancelled
before its bytes were taken withdraws them, and one already cancelled when it calls
never queues them. Nothing waits to fill a batch: a batch is
what queued while the previous write was going out, so a lone message is written at
once (a version that yielded under the lock to gather more made bursts travel as
convoys). A sender cancelled after its bytes were taken returns normally: they are on
their way, and a caller told otherwise would act as if they were never sent.

Why: a write per message was a third of a busy server's time, and each write to a pipe
or socket wakes the peer; a burst of answers, or the ``notifications/cancelled`` of a
thousand abandoned calls, now costs one.

The transport supplies ``write`` (what to do with a batch, including how a failure
breaks it) and ``check`` (raise if an earlier batch failed: the bytes it carried are
lost, so its other senders must fail too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import final

import trio

__all__ = ["WriteBatcher"]


@final
class WriteBatcher:
    """The queue and lock of one stream's writers; see the module doc.

    Bounded by its senders: each queues one item and waits until it is written.
    """

    __slots__ = ("_check", "_lock", "_seq", "_unsent", "_write")

    def __init__(
        self, write: Callable[[bytes], Awaitable[None]], check: Callable[[], None]
    ) -> None:
        self._write = write
        self._check = check
        self._lock = trio.StrictFIFOLock()
        self._unsent: dict[int, bytes] = {}
        self._seq = 0

    async def submit(self, data: bytes) -> None:
        """Return once ``data`` was written (alone or with others), or raise."""
        # Checked before queueing: Trio's cancellation check (the lock's, below) yields
        # before it raises, and in that yield the lock holder takes whatever is queued
        # into its batch. A sender already cancelled (a subscription torn down, say)
        # would then have its bytes written and return normally, as if sent before.
        await trio.lowlevel.checkpoint_if_cancelled()
        self._seq += 1
        mine = self._seq
        self._unsent[mine] = data
        try:
            async with self._lock:
                await trio.lowlevel.checkpoint_if_cancelled()
                self._check()  # an earlier batch failed, perhaps with these bytes in it
                if mine not in self._unsent:
                    return  # it went out with an earlier batch
                unsent = self._unsent
                batch = data if len(unsent) == 1 else b"".join(unsent.values())
                unsent.clear()
                await self._write(batch)
        except trio.Cancelled:
            if self._unsent.pop(mine, None) is not None:
                raise  # withdrawn: never written
            # Cancelled while waiting for the lock, after an earlier holder took these
            # bytes into its batch: the send went ahead, so it must not look like it
            # failed (a request would then never be followed by its cancellation).
            # The caller meets its cancellation at its next checkpoint.
            return

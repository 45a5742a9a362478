"""Coalesced writes: many senders, one byte stream, one write per burst.

Used by the NDJSON streams (stdio) and the WebSocket connection. A sender hands its
encoded bytes to :meth:`WriteBatcher.submit`. With no write going on it writes them at
once (a lone message waits for nothing), unless the last write carried several: under
load, it first lets one scheduler round pass, so that what the other tasks of that
round send joins its write. Otherwise they join the *open batch*, in call
order, and the sender parks on that batch. When a write ends, its batch's senders are
all woken at once, and the first sender of the open batch is woken to write that batch
whole, in one call: so a batch is what queued while the previous write was going out,
and each sender is woken once, whatever the batch's size.

A sender cancelled before its batch was taken withdraws its bytes, and one already
cancelled when it calls never queues them; so does one that
:meth:`WriteBatcher.interrupt` stops with an error (a call's deadline passed while it
waited to be written). A sender cancelled after its bytes were taken returns normally:
they are on their way, and a caller told otherwise would act as if they were never
sent.

Why: a write per message was a third of a busy server's time, and each write to a pipe
or socket wakes the peer; a burst of answers, or the ``notifications/cancelled`` of a
thousand abandoned calls, costs one. Why the round under load: without it, the first
sender after a write went out alone and the rest of its round waited for the next
write. With it, a stdio client at 100 calls in flight made 0.025 writes per call
instead of 0.042, and ran about 10 % more calls per second; a lone call (the last
write carried one message) still goes at once. And why a batch is woken as a whole: a lock
handed from sender to sender wakes one sender per scheduler pass, so a batch of a
hundred took a hundred passes (a convoy) where it now takes one.

The transport supplies ``write`` (what to do with a batch, including how a failure
breaks it) and ``check`` (raise if an earlier batch failed: the bytes it carried are
lost, so its other senders must fail too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, final

import outcome
import trio

from ._parked import ParkedTasks

__all__ = ["WriteBatcher"]

#: States of a batch: its senders queue, then one is woken to write it (its turn),
#: then it is being written, then written or failed.
_OPEN: Final = 0
_TURN: Final = 1
_TAKEN: Final = 2
_WRITTEN: Final = 3
_FAILED: Final = 4


@final
class _Batch(ParkedTasks[int]):
    """A batch: its bytes by sender key, and its parked senders with their keys."""

    __slots__ = ("items", "state")

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[int, bytes] = {}
        self.state = _OPEN


@final
class WriteBatcher:
    """The open batch and the write in progress of one stream; see the module doc.

    Bounded by its senders: each queues one item and waits until it is written.
    """

    __slots__ = ("_check", "_last", "_open", "_seq", "_write", "_writing")

    def __init__(
        self, write: Callable[[bytes], Awaitable[None]], check: Callable[[], None]
    ) -> None:
        self._write = write
        self._check = check
        self._open = _Batch()
        self._writing = False
        self._seq = 0
        #: Messages the last write carried (more than one: under load, see the module doc).
        self._last = 0

    async def submit(self, data: bytes) -> None:
        """Return once ``data`` was written (alone or with others), or raise."""
        # Checked before queueing: a sender already cancelled (a subscription torn
        # down, say) must not have its bytes taken into a batch and return normally,
        # as if sent before its cancellation.
        await trio.lowlevel.checkpoint_if_cancelled()
        batch = self._open
        self._seq += 1
        mine = self._seq
        batch.items[mine] = data
        if not self._writing:
            self._writing = True
            if self._last > 1:
                # Under load: the senders of this scheduler round join this write.
                await trio.lowlevel.cancel_shielded_checkpoint()
                await self._write_open(None)
            else:
                await self._write_open(data)
            return
        try:
            await batch.park(mine)
        except trio.Cancelled:
            if batch.state <= _TURN:
                del batch.items[mine]
                raise  # withdrawn: never written
            # Cancelled after a writer took these bytes into its batch: the send went
            # ahead, so it must not look like it failed (a request would then never be
            # followed by its cancellation). The caller meets its cancellation at its
            # next checkpoint.
            return
        state = batch.state
        if state == _TURN:
            await self._write_open(None)
        elif state == _FAILED:
            self._check()
            raise trio.BrokenResourceError("the write carrying this message failed")

    async def _write_open(self, lone: bytes | None) -> None:
        """Write the open batch (its turn came, or nothing else was writing), wake its
        senders, then hand the next batch to its first sender."""
        batch = self._open
        self._open = _Batch()
        batch.state = _TAKEN
        items = batch.items
        self._last = len(items)
        try:
            self._check()  # an earlier batch failed: these bytes cannot follow it
            await self._write(lone if lone is not None else b"".join(items.values()))
        except BaseException:
            batch.state = _FAILED
            raise
        else:
            batch.state = _WRITTEN
        finally:
            items.clear()
            batch.wake_all()
            following = self._open
            if following.items:
                following.state = _TURN
                following.wake_first()
            else:
                self._writing = False

    def interrupt(self, task: trio.lowlevel.Task, error: BaseException) -> bool:
        """If ``task`` waits with bytes not yet taken, withdraw them and make its
        :meth:`submit` raise ``error``; ``False`` if it does not (its bytes are being
        written, or it is not waiting here)."""
        batch = self._open
        mine = batch.waiters.pop(task, None)
        if mine is None:
            return False
        del batch.items[mine]
        trio.lowlevel.reschedule(task, outcome.Error(error))
        return True

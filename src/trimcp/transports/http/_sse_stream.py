"""The bounded queue between a session and one HTTP response.

The session side never waits on the network: :meth:`Outbox.put` only appends (or, past
the bounds, aborts the outbox), so a slow or stalled client cannot hold up the session
or any other stream (no head-of-line blocking). The response side drains it with
:meth:`Outbox.get`. An outbox is either a JSON outbox (exactly one body, for a request
answered before anything else was sent for it) or an SSE outbox (a stream of encoded
events); the producer decides before the first item.

Every byte an outbox holds, queued or being written, is also held against its session's
:class:`~._budget.ByteBudget` (and so the server's): an item is counted from
:meth:`Outbox.put` until the response asks for the next one (it has been written by
then) or the outbox is dropped (:meth:`Outbox.abort`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import final

import trio

from ._budget import ByteBudget

__all__ = ["Outbox"]


@final
class Outbox:
    """A bounded, non-blocking-to-fill queue of byte chunks for one response.

    Items are ``(event id or None, bytes)``; the id lets a resumed stream skip events
    it already replayed from the store.
    """

    __slots__ = (
        "_handed",
        "_held",
        "_items",
        "_size",
        "_wakeup",
        "_writing",
        "budget",
        "closed",
        "count",
        "json",
        "max_bytes",
        "max_events",
        "overflowed",
        "reply_status",
        "stream_id",
        "waker",
    )

    def __init__(
        self, *, max_events: int, max_bytes: int, budget: ByteBudget | None = None
    ) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        #: The session's output budget every held byte counts against (``None``: none).
        self.budget = budget
        #: Bytes taken from ``budget``: the queue and the item being written.
        self._held = 0
        #: Size of the item :meth:`get` handed out last (being written until the next).
        self._writing = 0
        #: Whether :meth:`get` handed out any item yet.
        self._handed = False
        #: ``True`` once the producer chose a single JSON body for this response.
        self.json = False
        #: The HTTP status and extra headers a middleware asked for a JSON answer
        #: (``HttpSessionChannel.answer_status``), or ``None``: the usual status.
        self.reply_status: tuple[int, list[tuple[bytes, bytes]]] | None = None
        #: ``True`` once the bounds were exceeded and the queue was thrown away.
        self.overflowed = False
        #: The request stream this outbox drains, if any (found again in O(1) when the
        #: response ends).
        self.stream_id: str | None = None
        #: Created on the first item and dropped once drained: an empty deque still
        #: holds a block of 64 slots, kept for as long as a parked stream lives.
        self._items: deque[tuple[str | None, bytes]] | None = None
        #: Items queued (read-only outside; an attribute rather than ``len()``: a
        #: response asks several times per answer).
        self.count = 0
        self._size = 0
        #: No more items will come (read-only outside; an attribute rather than a
        #: property: a response asks every scheduler round while it waits).
        self.closed = False
        #: Set when an item arrives or the outbox closes; made only while ``get``
        #: waits (a parked stream waits on its response's ``waker`` instead).
        self._wakeup: trio.Event | None = None
        #: Called (once per change) when an item arrives or the outbox closes: how a
        #: response waiting on something else as well (the client leaving) is woken.
        self.waker: Callable[[], None] | None = None

    def __len__(self) -> int:
        return self.count

    def put(
        self, chunk: bytes, event_id: str | None = None, *, whole: bool = False, force: bool = False
    ) -> bool:
        """Queue ``chunk``; ``False`` when the outbox is closed or just overflowed.

        ``whole`` skips the outbox's own bounds, for the single body of a JSON
        response; the budget still applies, and a whole body it refuses is not queued
        (the outbox stays open for the error that replaces it). ``force`` holds the
        bytes even past the budget: for that small error.
        """
        if self.closed:
            return False
        size = len(chunk)
        if not whole and (self.count >= self.max_events or self._size + size > self.max_bytes):
            return self._overflow()
        if self.budget is not None:
            holder = None if whole else self
            if not self.budget.take(size, force=force, holder=holder):
                return False if whole else self._overflow()
            self._held += size
        if self._items is None:
            self._items = deque()
        self._items.append((event_id, chunk))
        self.count += 1
        self._size += size
        self._wake()
        return True

    def _overflow(self) -> bool:
        """Close and drop what is queued, except the first item when nothing was handed
        to the response yet: it is the priming event, and a client that never got one
        has no event id to resume from."""
        self.overflowed = True
        keep = self._items[0] if self._items and not self._handed else None
        self.abort()
        if keep is not None:
            size = len(keep[1])
            if self.budget is not None:
                self.budget.take(size, force=True)
                self._held = size
            self._items = deque([keep])
            self.count = 1
            self._size = size
        return False

    @property
    def held(self) -> int:
        """Bytes held against the budget: the queue and the item being written."""
        return self._held

    def shed(self) -> None:
        """The server's output budget needs room: close as if this stream overflowed."""
        self._overflow()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
        if self.waker is not None:
            waker, self.waker = self.waker, None
            waker()

    def close(self) -> None:
        """No more items: the response ends once the queued ones are written. (Once
        closed, closing again wakes nobody: a waiter checks ``closed`` before it waits.)"""
        if not self.closed:
            self.closed = True
            self._wake()

    def abort(self) -> None:
        """Close and drop what is queued (the stream overflowed, or its response is
        over); every byte held goes back to the budget."""
        self._items = None
        self.count = 0
        self._size = 0
        self._writing = 0
        if self.budget is not None:
            if self._held:
                self.budget.give(self._held)
            self.budget.leave(self)
        self._held = 0
        if not self.closed:  # (close, inline: every response ends here)
            self.closed = True
            self._wake()

    async def get(self) -> tuple[str | None, bytes] | None:
        """The next item, or ``None`` once the outbox is closed and empty.

        Asking for the next item says the previous one was written: its bytes go back
        to the budget now.
        """
        self.written()
        while not self._items:
            if self.closed:
                return None
            wakeup = self._wakeup = trio.Event()
            await wakeup.wait()
            self._wakeup = None
        items = self._items
        assert items is not None
        item = items.popleft()
        self.count -= 1
        if not items:
            self._items = None
        self._size -= len(item[1])
        self._writing = len(item[1])
        self._handed = True
        return item

    def take_queued(self) -> bytes:
        """Every item queued now, joined: handed over with the item :meth:`get` just
        returned, to be written in the same body (their bytes count as being written
        until the next :meth:`get`)."""
        items = self._items
        if not items:
            return b""
        data = b"".join(chunk for _event_id, chunk in items)
        self._items = None
        self.count = 0
        self._size = 0
        self._writing += len(data)
        return data

    def written(self) -> None:
        """What was handed out was written: its bytes go back to the budget (the next
        :meth:`get` says so too)."""
        if self._writing and self.budget is not None:
            self.budget.give(self._writing)
            self._held -= self._writing
        self._writing = 0

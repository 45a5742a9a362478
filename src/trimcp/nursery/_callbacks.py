"""User callbacks run off the session's reader: notification handlers and progress.

Design invariant 12: the reader only reads. A callback that awaited something from its
own session inside the reader (an ``on_tools_list_changed`` that lists the tools) would
wait for an answer only the reader can read: the whole session stalled until the call
timed out. So the reader only queues, and callbacks run elsewhere:

* **Notification handlers** (``on_log``, the list-changed and resource handlers,
  anything registered with :meth:`~trimcp.dispatch.Registry.add_notification`). Each
  notification method is a *kind* with its own queue, run in arrival order by at most
  one task of the session. That task starts when a notification of its kind arrives
  and ends once the queue is empty, so an idle session keeps none and a busy one at
  most one per registered method. A slow callback holds up its own kind only.
* **Progress callbacks** (``on_progress`` of an outbound request) run in the task of
  the caller that is waiting for the answer (:class:`ProgressInbox`), in order, and
  all of them before the caller gets its result; the caller's timeout and
  cancellation cover them.

What a callback may do: anything its session offers, including new requests to the
peer and waiting for their answers. It runs concurrently with the code that made the
session, so it must not assume the call that caused the notification is still running.
An exception it raises is logged and dropped; the session lives on.

Order with answers: a request made outside a callback returns only once the callbacks
of every notification that arrived before its answer have run (:meth:`CallbackQueues.
caught_up`), so the log lines and list changes a tool sent while it ran have been seen
when its call returns, as they would be if the reader ran them. Requests made from a
callback (or from tasks it started) do not wait so, which is what keeps callbacks that
call back into their session from waiting on one another; a callback must therefore not
wait for a caller outside the callbacks to return.

Bounds: each queue holds ``max_queued_callbacks`` notifications that wait for their
callback; beyond that the oldest is dropped, counted and logged (for progress, a later
value says at least as much). A notification without params that is already queued
(``list_changed``) is not queued again: a second copy would say nothing new. When the
session ends, queued callbacks are dropped and a running one is cancelled, like any
work the session owns.
"""

from __future__ import annotations

import collections
import contextvars
import logging
from typing import TYPE_CHECKING, Any, final

import trio

from trimcp.dispatch import NotificationHandler

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["CallbackQueues", "ProgressInbox"]

logger = logging.getLogger("trimcp.session")

Progress = tuple[float, "float | None", "str | None"]

#: Set in callback tasks (and inherited by tasks they start): their requests do not wait
#: for the callback queues (see the module doc).
_IN_CALLBACK: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "trimcp_in_callback", default=False
)


@final
class _Kind:
    """The queue of one notification method and whether its task is running."""

    __slots__ = ("done", "handler", "pushed", "queue", "running")

    def __init__(self, handler: NotificationHandler) -> None:
        self.handler = handler
        self.queue: collections.deque[dict[str, Any] | None] = collections.deque()
        self.running = False
        #: Items of this kind queued so far, and finished (run, dropped or discarded).
        self.pushed = 0
        self.done = 0


@final
class CallbackQueues:
    """The notification callbacks of one session; see the module doc."""

    __slots__ = ("_kinds", "_limit", "_lot", "_session", "dropped", "outstanding")

    def __init__(self, session: Session, limit: int) -> None:
        self._session = session
        self._limit = limit
        self._kinds: dict[str, _Kind] = {}
        #: Notifications dropped because their kind's queue was full.
        self.dropped = 0
        #: Notifications queued whose callback has not finished yet (any kind).
        self.outstanding = 0
        #: Callers waiting in :meth:`caught_up`.
        self._lot = trio.lowlevel.ParkingLot()

    def push(
        self, method: str, handler: NotificationHandler, params: dict[str, Any] | None
    ) -> None:
        """Queue ``handler(session, params)`` behind the earlier ones of ``method``
        (synchronous: called by the reader)."""
        kind = self._kinds.get(method)
        if kind is None or kind.handler is not handler:
            # A handler replaced in the registry starts a kind of its own.
            kind = self._kinds[method] = _Kind(handler)
        queue = kind.queue
        if not params and any(not queued for queued in queue):
            return  # the same signal is already waiting
        if len(queue) >= self._limit:
            queue.popleft()
            self.dropped += 1
            self._finished(kind, 1)
            logger.warning(
                "dropped a %s notification: its callback is %d behind", method, self._limit
            )
        queue.append(params)
        kind.pushed += 1
        self.outstanding += 1
        if not kind.running:
            kind.running = True
            self._session._nursery.start_soon(self._run, method, kind)

    async def _run(self, method: str, kind: _Kind) -> None:
        session = self._session
        _IN_CALLBACK.set(True)
        try:
            # No checkpoint before the first callback: what was queued before the
            # session began to close still runs up to its own first checkpoint.
            while kind.queue:
                params = kind.queue.popleft()
                try:
                    await kind.handler(session, params)
                except Exception:
                    logger.exception("notification handler for %s raised", method)
                finally:
                    self._finished(kind, 1)
        finally:
            kind.running = False
            if kind.queue and (self._kinds.get(method) is not kind or session.is_closed):
                self._finished(kind, len(kind.queue))
                kind.queue.clear()

    def _finished(self, kind: _Kind, count: int) -> None:
        kind.done += count
        self.outstanding -= count
        if self._lot:
            self._lot.unpark_all()

    async def caught_up(self) -> None:
        """Return once the callbacks of every notification queued so far have finished
        (or were dropped); at once inside a callback (see the module doc). Not a
        checkpoint when nothing is queued: it is on every request's way back."""
        if not self.outstanding or _IN_CALLBACK.get():
            return
        marks = [(kind, kind.pushed) for kind in self._kinds.values() if kind.done < kind.pushed]
        for kind, mark in marks:
            while kind.done < mark and kind.running:
                await self._lot.park()


@final
class ProgressInbox:
    """Progress notifications of one outbound request, waiting for its caller's task.

    The reader pushes, the waiting caller runs the callback; ``wake`` is set when there
    is something new for the caller: progress, or the answer.
    """

    __slots__ = ("dropped", "items", "wake")

    def __init__(self, limit: int) -> None:
        self.items: collections.deque[Progress] = collections.deque(maxlen=limit)
        self.wake = trio.Event()
        #: Progress notifications dropped because the callback fell behind.
        self.dropped = 0

    def push(self, progress: Progress) -> None:
        if len(self.items) == self.items.maxlen:
            self.dropped += 1
        self.items.append(progress)
        self.wake.set()

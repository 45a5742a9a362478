"""Notifications sent from synchronous code: one bounded, coalescing queue per session.

``Session.notify_soon`` is how synchronous code (a tool registered at run time, which
announces ``notifications/tools/list_changed``; ``Server.notify_resource_updated``)
reaches a session. A task per call would pile up without bound behind a peer that
stopped reading (over a WebSocket, thousands of them for a burst of registrations),
so instead:

* the notifications wait in one queue per session, written in order by at most one
  task, which starts with the first one and ends once the queue is empty;
* a notification equal to one still waiting (same method and params) is not queued
  again: a second ``list_changed`` before the first went out says nothing new;
* the queue holds ``max_queued_notifications``; beyond it new ones are dropped,
  counted (:attr:`Notifier.dropped`) and logged, since a peer that far behind will
  list again anyway;
* a session that ended, or a peer that went away, drops what is queued.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, final

from trimcp.dispatch import ConnectionClosedError

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["Notifier"]

logger = logging.getLogger("trimcp.session")

_Key = tuple[str, str | None]


def _key(method: str, params: dict[str, Any] | None) -> _Key:
    if not params:
        return (method, None)
    return (method, json.dumps(params, sort_keys=True, separators=(",", ":"), default=repr))


@final
class Notifier:
    """The queue of one session's ``notify_soon``; see the module doc."""

    __slots__ = ("_limit", "_queue", "_running", "_session", "dropped")

    def __init__(self, session: Session, limit: int) -> None:
        self._session = session
        self._limit = limit
        self._queue: dict[_Key, tuple[str, dict[str, Any] | None]] = {}
        self._running = False
        #: Notifications dropped because the queue was full.
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._queue)

    def push(self, method: str, params: dict[str, Any] | None) -> None:
        """Queue a notification (synchronous); see the module doc for what is dropped."""
        key = _key(method, params)
        queue = self._queue
        if key in queue:
            return
        if len(queue) >= self._limit:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                logger.warning(
                    "dropped %d notification(s): %d are waiting for a peer that reads slowly",
                    self.dropped,
                    len(queue),
                )
            return
        queue[key] = (method, params)
        if not self._running:
            self._running = True
            self._session._nursery.start_soon(self._run)

    async def _run(self) -> None:
        queue = self._queue
        try:
            while queue:
                key = next(iter(queue))
                method, params = queue.pop(key)
                await self._session.notify(method, params)
        except ConnectionClosedError:
            queue.clear()  # nobody is left to tell
        finally:
            self._running = False

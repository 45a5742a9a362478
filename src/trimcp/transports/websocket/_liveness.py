"""Is the peer alive? Judged only by time we spent actually listening for it.

A ping's pong travels behind everything the peer sent before it. When our side stops
reading because its own handlers are busy (backpressure), the pong waits unread in the
socket, and a clock that simply ran from the ping would call a live peer dead and drop
every call it has pending. So the clock runs only while a reader waits on an empty
socket: time spent not reading (ours to answer for) or reading a backlog does not
count. Any bytes from the peer after the ping count as an answer: a peer that sends
anything is alive.
"""

from __future__ import annotations

from typing import final

import trio

__all__ = ["Liveness"]


@final
class Liveness:
    """The listening clock of one connection (see the module doc)."""

    __slots__ = ("_heard", "_idle", "_idle_since")

    def __init__(self) -> None:
        #: Set by any bytes from the peer while a ping is outstanding.
        self._heard: trio.Event | None = None
        #: Seconds a reader waited on an empty socket since the clock restarted.
        self._idle = 0.0
        #: When the reader in the socket now began to wait (``None``: nobody reads).
        self._idle_since: float | None = None

    def reading(self) -> None:
        """A reader begins to wait for bytes."""
        self._idle_since = trio.current_time()

    def read(self, *, got_bytes: bool) -> None:
        """The reader's wait ended (with bytes, or with the end of the stream)."""
        if self._idle_since is not None:
            self._idle += trio.current_time() - self._idle_since
            self._idle_since = None
        if got_bytes and self._heard is not None:
            self._heard.set()

    def expect(self) -> trio.Event:
        """A ping is about to go out: the event any later bytes will set."""
        self._heard = heard = trio.Event()
        return heard

    def restart(self) -> None:
        """The ping went out: the clock starts from nothing now."""
        self._idle = 0.0
        if self._idle_since is not None:
            self._idle_since = trio.current_time()

    def waited(self) -> float:
        """Seconds spent listening since :meth:`restart`."""
        ongoing = 0.0 if self._idle_since is None else trio.current_time() - self._idle_since
        return self._idle + ongoing

    async def heard_within(self, heard: trio.Event, timeout: float) -> bool:
        """Wait until ``heard`` is set (``True``) or ``timeout`` seconds of listening
        passed without it (``False``); time not spent listening does not count."""
        while not heard.is_set():
            left = timeout - self.waited()
            if left <= 0:
                return False
            with trio.move_on_after(left):
                await heard.wait()
        self._heard = None
        return True

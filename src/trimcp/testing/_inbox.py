"""What a connection under test received, and the interface every transport offers.

An :class:`Inbox` collects :class:`Inbound` items from a connection's reader tasks and
wakes whoever waits for one. It is bounded (:data:`MAX_UNREAD`): a server that floods
the peer past it is reported instead of exhausting memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs
import trio

__all__ = ["MAX_UNREAD", "Connection", "Inbound", "Inbox", "Target"]

#: Items a connection keeps unread before it reports a flood (default 10 000).
MAX_UNREAD = 10_000


@attrs.frozen
class Inbound:
    """One thing the server sent: a message (``raw`` bytes) or an HTTP status.

    ``frame`` is the index of the frame (POST) it answers, on HTTP; ``None`` on a stream
    transport or the standalone GET stream. ``status`` is set for an HTTP answer that
    carries no message (``202``) or refuses the POST (``4xx``, ``5xx``); then ``raw`` is
    its body.
    """

    raw: bytes
    frame: int | None = None
    status: int | None = None


class Inbox:
    """A bounded list of :class:`Inbound` with a wake-up for waiters."""

    def __init__(self) -> None:
        self._items: list[Inbound] = []
        self._changed = trio.Event()
        self.overflowed = False

    def put(self, item: Inbound) -> None:
        if len(self._items) >= MAX_UNREAD:
            self.overflowed = True
            return
        self._items.append(item)
        self._changed.set()
        self._changed = trio.Event()

    def has_items(self) -> bool:
        return bool(self._items)

    def take(self) -> list[Inbound]:
        """Everything received and not taken yet."""
        items, self._items = self._items, []
        return items

    async def wait_until(self, ready: Callable[[], bool], deadline: float) -> bool:
        """Wait until ``ready()`` (re-checked on every arrival) or the deadline."""
        while not ready():
            if trio.current_time() >= deadline:
                return False
            with trio.move_on_at(deadline):
                await self._changed.wait()
        return True


class Connection(Protocol):
    """One session's transport to the server under test."""

    inbox: Inbox

    async def send(self, data: bytes, index: int) -> None:
        """Send one frame (``index`` tags what HTTP answers it)."""

    def negotiated(self, version: str) -> None:
        """The protocol version agreed (HTTP sends it as a header from now on)."""

    def dead(self) -> str | None:
        """Why the server can no longer be reached (``None`` while it can)."""

    async def close(self) -> str | None:
        """Disconnect; return a violation when the server does not end the session."""


class Target(Protocol):
    """A server under test: opens one connection (one session) per call."""

    #: ``"mock"`` to run on a virtual clock (in-process servers), ``"real"`` otherwise.
    clock: str

    def describe(self) -> str:
        """A one-line name for reports."""

    async def connect(self, nursery: trio.Nursery) -> Connection:
        """Open a connection; its tasks run in ``nursery``."""


def lines(buffer: bytearray, chunk: bytes, limit: int) -> tuple[list[bytes], bool]:
    """Append ``chunk``; return complete lines and whether the unfinished one is too long."""
    buffer += chunk
    found: list[bytes] = []
    while True:
        end = buffer.find(b"\n")
        if end < 0:
            return found, len(buffer) > limit
        line = bytes(buffer[:end]).rstrip(b"\r")
        del buffer[: end + 1]
        if line.strip():
            found.append(line)

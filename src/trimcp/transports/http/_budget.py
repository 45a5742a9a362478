"""Byte budgets: how much one session, and the whole server, may hold for its clients.

Two kinds of memory grow with what clients do rather than with what the server was
configured for: output waiting to be written (SSE events queued on a response, JSON
answers being written) and events kept for resumption. Each has a budget per session
and one per server (per app, so per process for one app), so that one client can
neither grow the process without limit nor take all of it from the others.

:class:`ByteBudget` is the output side: a count against a limit inside its parent's
(a session's inside the server's). Nothing ever waits for room: whoever cannot take
bytes decides what gives way (the stream is closed, the answer replaced by an error).
:class:`EventBudget` is the resumption side: one limit for every event store of a
server, and the rule of who gives way when it is reached (the largest store evicts its
oldest events).
"""

from __future__ import annotations

from typing import Protocol, final

__all__ = ["ByteBudget", "EventBudget", "EventHolder", "Sheddable"]


class Sheddable(Protocol):
    """A holder of output bytes that may be made to give them all back (a stream)."""

    @property
    def held(self) -> int:
        """Bytes it holds against its budget."""
        ...

    def shed(self) -> None:
        """Give everything back (the stream is closed as if it overflowed)."""
        ...


@final
class ByteBudget:
    """Bytes held against ``limit`` and against every enclosing budget at once.

    A session's budget sits inside the server's. A session over its own budget is
    refused (its own stream overflows). The server's budget, when full, first makes
    the sessions holding the most give way: the largest stream of the largest session
    is shed, as long as that session holds at least as much as the one asking, and
    never the stream that asks. So streams a client leaves unread cannot keep another
    client's answers out.

    A session's budget is closed when the session ends: what it still holds goes back
    to its parent at once, so no path that forgets to give bytes back (a response cut
    short, a queue never drained) can shrink the server's budget for good.
    """

    __slots__ = ("_children", "_holders", "closed", "limit", "parent", "used")

    def __init__(self, limit: int, parent: ByteBudget | None = None) -> None:
        self.limit = limit
        self.parent = parent
        self.used = 0
        self.closed = False
        #: Budgets inside this one (the server's budget: its sessions').
        self._children: dict[ByteBudget, None] = {}
        #: Streams that may be shed to make room (a session's budget).
        self._holders: dict[Sheddable, None] = {}
        if parent is not None:
            parent._children[self] = None

    def take(
        self,
        size: int,
        *,
        force: bool = False,
        holder: Sheddable | None = None,
        _child: ByteBudget | None = None,
    ) -> bool:
        r"""Hold ``size`` more bytes for ``holder`` if they fit here and in every parent
        (``force``: hold them anyway, for a small error that replaces what did not
        fit). A holder that may be shed is remembered until it :meth:`leave`\ s."""
        if self.closed:
            return False
        over = not force and self.used + size > self.limit
        # Only the server's budget (asked on behalf of a session) makes others give way.
        if over and (_child is None or not self._shed(size, _child, holder)):
            return False
        parent = self.parent
        if parent is not None:
            if (
                parent.parent is None
                and not parent.closed
                and (force or parent.used + size <= parent.limit)
            ):
                parent.used += size  # fits at the top (the common case): no call for it
            elif not parent.take(size, force=force, holder=holder, _child=self):
                return False
        self.used += size
        if holder is not None and _child is None:
            self._holders[holder] = None
        return True

    def _shed(self, size: int, asker: ByteBudget, holder: Sheddable | None) -> bool:
        for session in sorted(self._children, key=lambda child: child.used, reverse=True):
            if session.used < asker.used:
                break
            while self.used + size > self.limit:
                victim = max(
                    (h for h in session._holders if h is not holder and h.held),
                    key=lambda h: h.held,
                    default=None,
                )
                if victim is None:
                    break
                victim.shed()
            if self.used + size <= self.limit:
                return True
        return False

    def give(self, size: int) -> None:
        """Return ``size`` bytes taken before, here and in every parent."""
        budget: ByteBudget | None = self
        while budget is not None and not budget.closed:  # a closed one gave it back
            budget.used -= size
            budget = budget.parent

    def leave(self, holder: Sheddable) -> None:
        """``holder`` holds nothing any more."""
        self._holders.pop(holder, None)

    def close(self) -> None:
        """Give back everything held and take no more (the owner has ended)."""
        if self.closed:
            return
        if self.parent is not None:
            if self.used:
                self.parent.give(self.used)
            self.parent._children.pop(self, None)
        self.used = 0
        self._holders.clear()
        self.closed = True


class EventHolder(Protocol):
    """What :class:`EventBudget` needs of an event store."""

    @property
    def size(self) -> int:
        """Bytes of event data held."""
        ...

    def evict_oldest(self) -> int:
        """Drop the oldest event held (releasing its bytes); its size, 0 if none."""
        ...


@final
class EventBudget:
    """The bytes of every event store of one server together, against ``max_bytes``.

    A store :meth:`reserve`\\ s bytes before it keeps an event and :meth:`release`\\ s
    them when it drops one. When the budget is full, the store holding the most gives
    way first: its oldest events are evicted (the asking store's own, while it holds at
    least its fair share, which is the common case of one busy session and is O(1)).
    So a flood from one session evicts that session's history, not everyone else's.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self._holders: dict[EventHolder, None] = {}

    def reserve(self, holder: EventHolder, size: int) -> bool:
        """Hold ``size`` more bytes for ``holder``, evicting to make room; ``False`` when
        even that cannot make room (the event is then not kept)."""
        if size > self.max_bytes:
            return False
        while self.used + size > self.max_bytes:
            victim = self._largest(holder)
            if victim is None or not victim.evict_oldest():
                return False
        self.used += size
        self._holders[holder] = None
        return True

    def release(self, holder: EventHolder, size: int) -> None:
        self.used -= size
        if holder.size <= 0:
            self._holders.pop(holder, None)

    def _largest(self, asker: EventHolder) -> EventHolder | None:
        if asker.size > 0 and asker.size * len(self._holders) >= self.used:
            return asker
        return max(self._holders, key=lambda h: h.size, default=None)

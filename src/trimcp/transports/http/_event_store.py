"""Where SSE events are kept so that a client can resume a stream (``Last-Event-ID``).

Each session has its own store (a factory makes one per session), so event ids and
replays can never cross sessions. Within a session, every SSE stream has a stream id,
and :meth:`EventStore.replay_after` returns only events of the stream the given event
belongs to: a replay never crosses streams (spec MUST NOT).

:class:`MemoryEventStore` is the bounded default. Event ids are ``"<stream>-<seq>"``
with one counter per store, so they are unique within the session. Its bounds are per
stream, per session and, through a shared :class:`~._budget.EventBudget`, per server;
what a bound evicts is remembered, so a resumption that would skip it is refused.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol, final

import attrs

from ._budget import EventBudget

__all__ = ["EventStore", "MemoryEventStore", "Replay", "split_event_id"]


@final
@attrs.frozen
class Replay:
    """The answer to a resumption: the stream resumed and its events after the id.

    ``events`` holds ``(event id, payload)`` pairs in order; priming events (no
    payload) are left out. ``gap`` is ``True`` when events after the id are no longer
    kept (evicted by a bound): a replay would skip them, so the resumption is refused.
    """

    stream_id: str
    events: tuple[tuple[str, bytes], ...]
    gap: bool = False


class EventStore(Protocol):
    """Storage of one session's SSE events.

    Contract: ``store`` returns an event id that is unique within the session and
    visible ASCII without CR/LF; ``replay_after`` returns ``None`` for an id it cannot
    read (malformed, another session's), a :class:`Replay` with ``gap`` for one whose
    following events it no longer has, and otherwise only the events of that id's
    stream that came after it. Neither raises for bad input. ``replay_after`` must take
    its snapshot after its last checkpoint (``await``), so that no event stored while
    it runs is missed by the stream it re-attaches. ``close`` is called once the
    session has ended: whatever the store holds for it may go.
    """

    async def store(self, stream_id: str, payload: bytes | None) -> str: ...

    async def replay_after(self, last_event_id: str) -> Replay | None: ...

    def close(self) -> None: ...


def split_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream id, sequence number)`` of an event id ``<stream>-<seq>`` this server
    wrote; ``None`` for any other text (a ``Last-Event-ID`` is the client's to send)."""
    stream_id, sep, seq_text = event_id.rpartition("-")
    if not sep or not seq_text.isdigit() or len(seq_text) > 18:
        return None
    return stream_id, int(seq_text)


@final
class _StreamLog:
    __slots__ = ("events", "evicted", "size")

    def __init__(self) -> None:
        # A list, not a deque: a deque holds a block of 64 slots from its first item
        # (over 500 bytes), and most streams keep one or two events (a parked SSE
        # response: its priming event and a notification). Evicting from the front
        # moves at most max_events pointers.
        self.events: list[tuple[int, bytes]] = []
        self.size = 0
        #: The highest sequence number dropped from this stream (0: none): a replay
        #: from before it would skip events.
        self.evicted = 0


@final
class MemoryEventStore:
    """A bounded in-memory :class:`EventStore` for one session.

    Args:
      max_events: events kept per stream; the oldest are evicted first.
      max_bytes: bytes of event data kept per stream; the oldest are evicted first.
      max_streams: streams kept; the least recently written stream is evicted first.
      max_session_bytes: bytes of event data across the session's streams; the
        session's oldest events are evicted first.
      budget: the server's :class:`EventBudget`, shared by every session's store
        (``None``: no server-wide bound). When it is full the largest store gives way.

    An event larger than a bound is not kept at all. Whatever is evicted is remembered
    per stream, so a client resuming from before it is refused (``Replay.gap``) rather
    than silently handed a stream with a hole in it.
    """

    def __init__(
        self,
        *,
        max_events: int = 1000,
        max_bytes: int = 4 << 20,
        max_streams: int = 64,
        max_session_bytes: int = 16 << 20,
        budget: EventBudget | None = None,
    ):
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_streams = max_streams
        self.max_session_bytes = max_session_bytes
        self.budget = budget
        self._streams: OrderedDict[str, _StreamLog] = OrderedDict()
        self._seq = 0
        self._size = 0

    def __len__(self) -> int:
        """Events held, across streams."""
        return sum(len(log.events) for log in self._streams.values())

    @property
    def size(self) -> int:
        """Bytes of event data held, across streams."""
        return self._size

    async def store(self, stream_id: str, payload: bytes | None) -> str:
        self._seq += 1
        seq = self._seq
        log = self._streams.get(stream_id)
        if log is None:
            log = self._streams[stream_id] = _StreamLog()
            # Nothing from before this event is kept: a stream evicted whole and written
            # again cannot replay from one of its old ids without a hole.
            log.evicted = seq - 1
            while len(self._streams) > self.max_streams:
                self._drop_stream(next(iter(self._streams)))
        else:
            self._streams.move_to_end(stream_id)
        if payload is not None:
            self._keep(log, seq, payload)
        return f"{stream_id}-{seq}"

    def _keep(self, log: _StreamLog, seq: int, payload: bytes) -> None:
        size = len(payload)
        if size > min(self.max_bytes, self.max_session_bytes):
            log.evicted = seq  # too large to keep: a replay from before it has a gap
            return
        while log.events and (
            len(log.events) >= self.max_events or log.size + size > self.max_bytes
        ):
            self._pop(log)
        while self._size + size > self.max_session_bytes and self.evict_oldest():
            pass
        if self.budget is not None and not self.budget.reserve(self, size):
            log.evicted = seq
            return
        log.events.append((seq, payload))
        log.size += size
        self._size += size

    def _pop(self, log: _StreamLog) -> int:
        seq, data = log.events.pop(0)
        log.evicted = seq
        log.size -= len(data)
        self._size -= len(data)
        if self.budget is not None:
            self.budget.release(self, len(data))
        return len(data)

    def _drop_stream(self, stream_id: str) -> None:
        log = self._streams.pop(stream_id)
        while log.events:
            self._pop(log)

    def evict_oldest(self) -> int:
        """Drop the session's oldest event, whichever stream holds it; its size."""
        oldest: _StreamLog | None = None
        for log in self._streams.values():
            if log.events and (oldest is None or log.events[0][0] < oldest.events[0][0]):
                oldest = log
        return 0 if oldest is None else self._pop(oldest)

    async def replay_after(self, last_event_id: str) -> Replay | None:
        parsed = split_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        if seq > self._seq:
            return None
        log = self._streams.get(stream_id)
        if log is None:  # a stream evicted whole (or never seen): nothing can be vouched for
            return Replay(stream_id, (), gap=True)
        if log.evicted > seq:
            return Replay(stream_id, (), gap=True)
        events = tuple((f"{stream_id}-{n}", data) for n, data in log.events if n > seq)
        return Replay(stream_id, events)

    def close(self) -> None:
        """The session ended: drop everything and give its bytes back to the budget."""
        for stream_id in list(self._streams):
            self._drop_stream(stream_id)

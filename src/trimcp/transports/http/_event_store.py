"""Where SSE events are kept so that a client can resume a stream (``Last-Event-ID``).

Each session has its own store (a factory makes one per session), so event ids and
replays can never cross sessions. Within a session, every SSE stream has a stream id,
and :meth:`EventStore.replay_after` returns only events of the stream the given event
belongs to: a replay never crosses streams (spec MUST NOT).

:class:`MemoryEventStore` is the bounded default. Event ids are ``"<stream>-<seq>"``
with one counter per store, so they are unique within the session.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Protocol, final

import attrs

__all__ = ["EventStore", "MemoryEventStore", "Replay"]


@final
@attrs.frozen
class Replay:
    """The answer to a resumption: the stream resumed and its events after the id.

    ``events`` holds ``(event id, payload)`` pairs in order; priming events (no
    payload) are left out.
    """

    stream_id: str
    events: tuple[tuple[str, bytes], ...]


class EventStore(Protocol):
    """Storage of one session's SSE events.

    Contract: ``store`` returns an event id that is unique within the session and
    visible ASCII without CR/LF; ``replay_after`` returns ``None`` for an id it does
    not know (malformed, evicted stream, another session's), and otherwise only the
    events of that id's stream that came after it. Neither raises for bad input.
    ``replay_after`` must take its snapshot after its last checkpoint (``await``), so
    that no event stored while it runs is missed by the stream it re-attaches.
    """

    async def store(self, stream_id: str, payload: bytes | None) -> str: ...

    async def replay_after(self, last_event_id: str) -> Replay | None: ...


@final
class _StreamLog:
    __slots__ = ("events", "size")

    def __init__(self) -> None:
        self.events: deque[tuple[int, bytes]] = deque()
        self.size = 0


@final
class MemoryEventStore:
    """A bounded in-memory :class:`EventStore` for one session.

    Args:
      max_events / max_bytes: per stream; the oldest events are evicted first.
      max_streams: streams kept; the least recently written stream is evicted first.
    """

    def __init__(self, *, max_events: int = 1000, max_bytes: int = 4 << 20, max_streams: int = 64):
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_streams = max_streams
        self._streams: OrderedDict[str, _StreamLog] = OrderedDict()
        self._seq = 0

    def __len__(self) -> int:
        """Events held, across streams."""
        return sum(len(log.events) for log in self._streams.values())

    async def store(self, stream_id: str, payload: bytes | None) -> str:
        self._seq += 1
        log = self._streams.get(stream_id)
        if log is None:
            log = self._streams[stream_id] = _StreamLog()
            while len(self._streams) > self.max_streams:
                self._streams.popitem(last=False)
        else:
            self._streams.move_to_end(stream_id)
        if payload is not None:
            log.events.append((self._seq, payload))
            log.size += len(payload)
            while log.events and (len(log.events) > self.max_events or log.size > self.max_bytes):
                _, old = log.events.popleft()
                log.size -= len(old)
        return f"{stream_id}-{self._seq}"

    async def replay_after(self, last_event_id: str) -> Replay | None:
        stream_id, sep, seq_text = last_event_id.rpartition("-")
        if not sep or not seq_text.isdigit() or len(seq_text) > 18:
            return None
        log = self._streams.get(stream_id)
        seq = int(seq_text)
        if log is None or seq > self._seq:
            return None
        events = tuple((f"{stream_id}-{n}", data) for n, data in log.events if n > seq)
        return Replay(stream_id, events)

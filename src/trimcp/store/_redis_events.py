"""One session's SSE event log in Redis (:class:`RedisEvents`).

Each stream is a Redis stream of its events, with a small hash of meta (who writes it,
who holds it, its requests, whether it is complete); the scripts of
:mod:`._redis_scripts` change them atomically. Bounds are those of the in-memory store:
per stream (``replay_events``, ``replay_bytes``), per session (``replay_streams``
request streams, ``replay_session_bytes``); the oldest events go first and are
remembered, so a resumption from before them is refused as a gap (410). The
server-wide ``replay_total_bytes`` bounds a process's memory and does not apply: Redis
keeps these (bound it with Redis' own ``maxmemory``). Every key expires after
``session_idle_timeout`` without use.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, final

from trimcp.transports.http import Attached, Opened, Replay, split_event_id
from trimcp.wire import RequestId

from ._redis_link import text as _text
from ._redis_scripts import ATTACH, DETACH, END, OPENED, PUBLISH

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = ["RedisEvents"]


@final
class RedisEvents:
    """The event log of one session (a ``SharedEvents``); see the module doc."""

    def __init__(self, store: RedisStore, session_id: str) -> None:
        self.redis = store
        self.session_id = session_id
        self.prefix = store.session_prefix(session_id)

    def _keys(self, stream_id: str) -> tuple[str, str, str, str]:
        p = self.prefix
        return f"{p}s", f"{p}e:{stream_id}", f"{p}m:{stream_id}", f"{p}st"

    # ------------------------------------------------------------------ EventStore
    async def store(self, stream_id: str, payload: bytes | None) -> str:
        if payload is None:
            return (await self.opened(stream_id, ())).event_id
        return await self.publish(stream_id, payload, last=False)

    async def replay_after(self, last_event_id: str) -> Replay | None:
        """The events after ``last_event_id`` (read only: nothing is held)."""
        attached = await self._attach(last_event_id, hold=False)
        return None if attached is None else attached.replay

    # ------------------------------------------------------------------ SharedEvents
    async def publish(self, stream_id: str, payload: bytes, *, last: bool) -> str:
        store = self.redis
        limits = store.limits
        seq = await store.link.script(
            PUBLISH,
            list(self._keys(stream_id)),
            [
                stream_id,
                payload,
                int(last),
                limits.replay_events,
                limits.replay_bytes,
                limits.replay_streams,
                store.ttl_ms,
                store.process,
                store.channel_prefix,
                self.session_id,
                self.prefix,
                limits.replay_session_bytes,
            ],
        )
        return f"{stream_id}-{seq}" if seq else ""

    async def opened(self, stream_id: str, request_ids: tuple[RequestId, ...]) -> Opened:
        store = self.redis
        session, _, meta, streams = self._keys(stream_id)
        token = secrets.token_hex(6)
        seq, previous = await store.link.script(
            OPENED,
            [session, meta, streams],
            [
                stream_id,
                json.dumps(list(request_ids)),
                store.process,
                token,
                store.ttl_ms,
                store.limits.replay_streams,
                self.prefix,
            ],
        )
        return Opened(f"{stream_id}-{seq}", token, None if previous < 0 else int(previous))

    async def attach(self, last_event_id: str) -> Attached | None:
        return await self._attach(last_event_id, hold=True)

    async def _attach(self, last_event_id: str, *, hold: bool) -> Attached | None:
        parsed = split_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, after = parsed
        store = self.redis
        session, events, meta, _ = self._keys(stream_id)
        token = secrets.token_hex(6)
        reply = await store.link.script(
            ATTACH,
            [session, events, meta],
            [stream_id, after, store.process, token, store.ttl_ms, int(hold)],
        )
        status = int(reply[0])
        if status == 0:
            return None
        if status < 0:
            return Attached(Replay(stream_id, (), gap=True), False, None, (), after, token, None)
        done, writer, ids, previous, last = reply[1:6]
        entries = reply[6:]
        replay = tuple(
            (f"{stream_id}-{_text(entries[i])}", bytes(entries[i + 1]))
            for i in range(0, len(entries), 2)
        )
        decoded = json.loads(ids)
        request_ids = tuple(i for i in decoded if isinstance(i, str | int))
        return Attached(
            Replay(stream_id, replay),
            live=_text(done) != "1",
            producer=int(writer) if _text(writer).isdigit() else None,
            request_ids=request_ids,
            last_seq=int(last),
            token=token,
            previous=None if int(previous) < 0 else int(previous),
        )

    async def detach(self, stream_id: str, token: str) -> None:
        _, _, meta, _ = self._keys(stream_id)
        await self.redis.link.script(DETACH, [meta], [f"{self.redis.process}:{token}"])

    async def end(self, stream_id: str) -> None:
        store = self.redis
        _, _, meta, _ = self._keys(stream_id)
        await store.link.script(
            END, [meta], [stream_id, store.process, store.channel_prefix, self.session_id]
        )

    def close(self) -> None:
        """A replica ending here ends nothing in the store (the session lives on)."""

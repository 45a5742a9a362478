"""The sessions of a shared store, on this process: replicas, relays, dead writers.

With a shared store (:mod:`._shared`) a session lives in the store, and each process
that serves one of its requests runs a *replica*: a local session restored from the
record (:meth:`Replicas.restore`), in the session manager like any other, bounded and
reaped like any other. Ending a replica ends nothing but the replica: the session ends
when its record does (``DELETE``, or no use anywhere for ``session_idle_timeout``).

:meth:`Replicas.run` runs beside the sessions:

* it takes the envelopes relayed to this process (:meth:`Replicas.envelope`): events
  of streams held here, client messages for a replica here (delivered in order by one
  task, each within ``inbound_wait``; beyond :data:`RELAY_QUEUE` waiting they are
  dropped and counted), the end of a session, a changed record; and, after the relay
  was cut off, a ``resync``: what it missed is recovered from the store;
* every ``check_interval`` it keeps the records of busy replicas alive (an open GET
  stream is use), and asks the store which writers of streams held here have lost
  their lease: their requests get an error answer and their streams end.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Final, final

import trio

from trimcp.wire import Message, Notification, RemoteProtocolError, decode

from ._asgi_post import deliver_here
from ._guards import HttpError
from ._handshake import INITIALIZED, note_initialized
from ._server_limits import HttpServerLimits
from ._sessions import HttpSessionChannel
from ._sessions_manager import SessionManager
from ._shared import Envelope, SharedSessions, StoreUnavailable, unavailable
from ._shared_channel import SharedRouting

__all__ = ["RELAY_QUEUE", "Replicas"]

logger = logging.getLogger("trimcp.http.server")

#: Relayed client messages waiting to be delivered to replicas here.
RELAY_QUEUE: Final = 1024
#: The ids ``new_session_id`` makes (URL-safe base64).
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


@final
class Replicas:
    """This process's replicas of shared sessions (module doc)."""

    def __init__(
        self,
        manager: SessionManager,
        shared: SharedSessions,
        limits: HttpServerLimits,
        *,
        check_interval: float = 1.0,
    ) -> None:
        self.manager = manager
        self.shared = shared
        self.limits = limits
        self.check_interval = check_interval
        self._inbox_send, self._inbox = trio.open_memory_channel[tuple[str, Message]](RELAY_QUEUE)
        #: Relayed messages dropped because the queue was full.
        self.dropped = 0
        shared.on_envelope(self.envelope)
        manager.shared_routing = self.routing

    def routing(self, session_id: str) -> SharedRouting:
        """The shared side of a new channel of ``session_id``."""
        touch_every = self.limits.session_idle_timeout / 10
        return SharedRouting(session_id, self.shared, touch_every=touch_every)

    def check(self) -> None:
        """503 at once while the store is known to be unreachable."""
        if not self.shared.available:
            raise unavailable(self.shared.retry_after)

    async def create(self, channel: HttpSessionChannel, owner: str | None) -> None:
        """Record a session just created here; 503 (and no session) when the store
        cannot be reached."""
        assert channel.session_id is not None
        try:
            self.check()
            await self.shared.create_session(channel.session_id, owner)
        except (StoreUnavailable, HttpError):
            self.manager.terminate(channel)
            raise unavailable(self.shared.retry_after) from None

    async def restore(self, session_id: str) -> HttpSessionChannel | None:
        """A replica of ``session_id`` restored from its record (``None``: no such
        session); 503 when the store cannot be reached. An id this server could not
        have made is unknown without asking the store (it never becomes part of a key)."""
        if not _SESSION_ID.fullmatch(session_id):
            return None
        self.check()
        try:
            record = await self.shared.load_session(session_id)
        except StoreUnavailable:
            raise unavailable(self.shared.retry_after) from None
        if record is None:
            return None
        existing = self.manager.get(session_id)  # restored meanwhile by another request
        if existing is not None:
            return existing
        return self.manager.restore(record, self.routing(session_id))

    async def end(self, channel: HttpSessionChannel) -> None:
        """``DELETE``: the session ends everywhere."""
        assert channel.session_id is not None
        try:
            await self.shared.end_session(channel.session_id)
        except StoreUnavailable:
            raise unavailable(self.shared.retry_after) from None
        self.manager.terminate(channel)

    # ------------------------------------------------------------ relayed to this process
    def envelope(self, envelope: Envelope) -> None:
        if envelope.kind == "resync":
            self._resync()
            return
        channel = self.manager.get(envelope.session_id)
        if channel is None or channel.shared is None:
            return
        kind = envelope.kind
        if kind in ("ev", "end", "take"):
            channel.shared.relayed(envelope)
        elif kind == "msg":
            if envelope.stream != str(self.shared.process):  # not our own broadcast
                self._queue(envelope.session_id, envelope.payload)
        elif kind == "bye":
            self.manager.terminate(channel)
        elif kind == "upd" and channel.shared.on_update is not None:
            try:
                fields = json.loads(envelope.payload)
            except ValueError:
                return
            if isinstance(fields, dict):
                if fields.get("ready") == "1":  # the handshake ended on another process
                    note_initialized(channel, Notification(method=INITIALIZED))
                channel.shared.on_update({k: v for k, v in fields.items() if isinstance(v, str)})

    def _resync(self) -> None:
        """The relay was down for a while: what it carried meanwhile is lost. Streams
        held here for other writers end (their clients resume from the store), and
        idle replicas go (the next request restores them from their records, which
        may have changed or gone)."""
        for channel in self.manager.shared_channels():
            if channel.shared is None:
                continue
            for stream_id in list(channel.shared.tails):
                channel.shared.close_tail(stream_id)
            if not channel.busy:
                self.manager.terminate(channel)

    def _queue(self, session_id: str, payload: bytes) -> None:
        try:
            decoded = decode(payload)
        except RemoteProtocolError:
            return
        if isinstance(decoded, list):
            return
        try:
            self._inbox_send.send_nowait((session_id, decoded))
        except trio.WouldBlock:
            self.dropped += 1

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Deliver relayed messages and watch the writers (module doc), until cancelled."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._deliver)
            nursery.start_soon(self._watch)
            task_status.started()

    async def _deliver(self) -> None:
        async for session_id, message in self._inbox:
            channel = self.manager.get(session_id)
            if channel is None or channel.closed:
                continue
            try:
                await deliver_here(channel, message, self.limits.inbound_wait)
            except HttpError:
                self.dropped += 1  # the replica ended, or stayed too busy to take it

    async def _watch(self) -> None:
        while True:
            await trio.sleep(self.check_interval)
            channels = [c for c in self.manager.shared_channels() if c.shared is not None]
            writers: set[int] = set()
            for channel in channels:
                assert channel.shared is not None
                writers |= channel.shared.producers()
                if channel.busy:
                    channel.shared.touch(force=False)
            if not writers:
                continue
            try:
                alive = await self.shared.alive(writers)
            except StoreUnavailable:
                continue
            for dead in writers - alive:
                logger.warning("process %d lost its lease: failing its streams here", dead)
                for channel in channels:
                    assert channel.shared is not None
                    try:
                        await channel.shared.writer_died(dead)
                    except StoreUnavailable:
                        break

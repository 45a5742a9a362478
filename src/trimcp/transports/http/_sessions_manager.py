"""The session table of a Streamable HTTP server: creation, lookup, end, reaping.

Sessions outlive the HTTP requests that use them, so they run in the manager's own
nursery (:meth:`SessionManager.run`, entered by ASGI lifespan or by ``serve_http``).
Each session runs ``serve_session(channel)`` (for example ``Server.serve_channel``) in
its own cancel scope. The table is bounded (``max_sessions``; 503 beyond it), and a
reaper terminates sessions idle for ``session_idle_timeout``, so sessions that are never
deleted cannot pile up.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Protocol, final

import trio

from trimcp.nursery import MessageChannel

from ._budget import ByteBudget
from ._event_store import EventStore
from ._guards import SERVER_ERROR, HttpError
from ._server_limits import HttpServerLimits
from ._sessions import HttpSessionChannel

__all__ = ["ManagedChannel", "ServeSession", "SessionManager", "new_session_id"]

logger = logging.getLogger("trimcp.http.server")

ServeSession = Callable[[MessageChannel], Awaitable[object]]


class ManagedChannel(MessageChannel, Protocol):
    """What the manager needs of a session's channel beyond :class:`MessageChannel`."""

    session_id: str | None
    on_close: Callable[[], None] | None
    #: The session's output budget, closed when the session is forgotten.
    output: ByteBudget | None

    def close(self) -> None: ...


def new_session_id() -> str:
    """192 bits from :mod:`secrets`, URL-safe base64: visible ASCII, 32 characters."""
    return secrets.token_urlsafe(24)


@final
class SessionManager:
    """Owns every session of one server; see the module doc."""

    def __init__(
        self,
        serve_session: ServeSession,
        limits: HttpServerLimits,
        store_factory: Callable[[], EventStore] | None,
    ) -> None:
        self.serve_session = serve_session
        self.limits = limits
        self.store_factory = store_factory
        self._sessions: dict[str, HttpSessionChannel] = {}
        self._scopes: dict[ManagedChannel, trio.CancelScope] = {}
        self._nursery: trio.Nursery | None = None
        #: Sessions ended by the idle reaper (a counter for tests and metrics).
        self.reaped = 0
        #: Bytes queued or being written to every session's clients.
        self.output = ByteBudget(limits.output_total_bytes)

    @property
    def running(self) -> bool:
        return self._nursery is not None

    def __len__(self) -> int:
        """Sessions alive (stateful and stateless)."""
        return len(self._scopes)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the sessions until cancelled; every session ends with it."""
        if self._nursery is not None:
            raise RuntimeError("the session manager is already running")
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._reap)
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            for channel in list(self._scopes):
                channel.close()

    def get(self, session_id: str) -> HttpSessionChannel | None:
        return self._sessions.get(session_id)

    def create(self, *, stateless: bool = False, resumable: bool = True) -> HttpSessionChannel:
        """Start a new session; 503 when the table is full or the server is not running.

        ``resumable=False`` gives it no event store (stateless-era POSTs: the era has no
        resumability, so no event ids or priming events either).
        """
        self._check_room()
        session_id = None if stateless else new_session_id()
        factory = self.store_factory if resumable else None
        store = factory() if factory is not None else None
        channel = HttpSessionChannel(session_id, self.limits, store, self.session_output())
        if session_id is not None:
            self._sessions[session_id] = channel
        self._spawn(channel)
        return channel

    def session_output(self) -> ByteBudget:
        """A new session's output budget, inside the server's."""
        return ByteBudget(self.limits.output_session_bytes, self.output)

    def adopt(self, channel: ManagedChannel) -> None:
        """Serve a session of another transport (legacy HTTP+SSE) beside these.

        It counts towards ``max_sessions`` and ends with the manager, but its id is not
        in the table :meth:`get` reads, and the idle reaper leaves it alone (it lives as
        long as its own stream). 503 as for :meth:`create`.
        """
        self._check_room()
        self._spawn(channel)

    def _check_room(self) -> None:
        if self._nursery is None:
            raise HttpError(
                503, "Service Unavailable: the server is not running", code=SERVER_ERROR
            )
        if len(self._scopes) >= self.limits.max_sessions:
            raise HttpError(
                503,
                "Service Unavailable: too many sessions",
                code=SERVER_ERROR,
                headers=[(b"retry-after", str(self.limits.retry_after).encode())],
            )

    def _spawn(self, channel: ManagedChannel) -> None:
        assert self._nursery is not None
        scope = trio.CancelScope()
        self._scopes[channel] = scope
        channel.on_close = scope.cancel
        self._nursery.start_soon(self._serve, channel, scope)

    def terminate(self, channel: ManagedChannel) -> None:
        """End the session now: its tasks are cancelled and its id is forgotten."""
        channel.close()
        self._forget(channel)

    def _forget(self, channel: ManagedChannel) -> None:
        if channel.output is not None:
            channel.output.close()
        self._scopes.pop(channel, None)
        if channel.session_id is not None and self._sessions.get(channel.session_id) is channel:
            del self._sessions[channel.session_id]

    async def _serve(self, channel: ManagedChannel, scope: trio.CancelScope) -> None:
        try:
            with scope:
                await self.serve_session(channel)
        except Exception:
            logger.exception("session %s failed", channel.session_id)
        finally:
            self.terminate(channel)

    async def _reap(self) -> None:
        idle = self.limits.session_idle_timeout
        interval = min(max(idle / 10, 0.01), 60.0)
        while True:
            await trio.sleep(interval)
            now = trio.current_time()
            for channel in list(self._sessions.values()):
                if channel.busy == 0 and now - channel.last_active >= idle:
                    logger.info("session %s idle for %g s: terminated", channel.session_id, idle)
                    self.reaped += 1
                    self.terminate(channel)

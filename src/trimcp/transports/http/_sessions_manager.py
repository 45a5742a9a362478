"""The session table of a Streamable HTTP server: creation, lookup, end, reaping.

Sessions outlive the HTTP requests that use them, so they run in the manager's own
nursery (:meth:`SessionManager.run`, entered by ASGI lifespan or by ``serve_http``).
Each session runs ``serve_session(channel)`` (for example ``Server.serve_channel``) in
its own cancel scope. A reaper terminates sessions idle for ``session_idle_timeout``, so
sessions that are never deleted cannot pile up.

The table is bounded, and fairly: a client (an address, or a principal, see
:mod:`._fairness`) may hold ``max_sessions_per_client`` sessions (429 beyond), and the
table ``max_sessions`` (503 beyond). A session opened by ``initialize`` must see
``notifications/initialized`` within ``handshake_timeout`` or it ends (its cancel scope
has that deadline until then), and when the table is full, the oldest session still in
its handshake gives way to a new one, taken from the client with the most of them. So a
flood of bare ``initialize`` requests holds few sessions, briefly, and locks no one out.
"""

from __future__ import annotations

import itertools
import logging
import math
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any, Protocol, final

import trio

from trimcp.nursery import Caller, MessageChannel

from ._asgi_io import Receive, read_body, whole_body
from ._budget import ByteBudget
from ._eager import EagerLot
from ._event_store import EventStore
from ._fairness import client_key, oldest_of_heaviest
from ._guards import SERVER_ERROR, HttpError
from ._inbound import InboundBudget
from ._server_limits import HttpServerLimits
from ._sessions import HttpSessionChannel
from ._shared import SessionRecord
from ._shared_channel import SharedRouting

__all__ = ["ManagedChannel", "ServeSession", "SessionManager", "new_session_id"]

logger = logging.getLogger("trimcp.http.server")

ServeSession = Callable[[MessageChannel], Awaitable[object]]


class ManagedChannel(MessageChannel, Protocol):
    """What the manager needs of a session's channel beyond :class:`MessageChannel`."""

    session_id: str | None
    on_close: Callable[[], None] | None
    #: Called once when ``notifications/initialized`` has been delivered.
    on_initialized: Callable[[], None] | None
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
        #: Sessions per client key, and the key of each session that has one.
        self._clients: Counter[str] = Counter()
        self._client_of: dict[ManagedChannel, str] = {}
        #: Sessions still waiting for ``notifications/initialized``, oldest first.
        self._handshaking: dict[ManagedChannel, None] = {}
        self._nursery: trio.Nursery | None = None
        #: Idle sessions of stateless-era POSTs, kept for the next ones (most recent last).
        self._pool: dict[HttpSessionChannel, None] = {}
        self._request_ids = itertools.count(1)
        #: Sessions ended by the idle reaper (a counter for tests and metrics).
        self.reaped = 0
        #: Bytes queued or being written to every session's clients.
        self.output = ByteBudget(limits.output_total_bytes)
        #: Bytes of request bodies being received (:mod:`._inbound`).
        self.inbound = InboundBudget(limits.inbound_total_bytes, limits.inbound_client_bytes)
        #: Makes the shared side of a session's channel when sessions live in a shared
        #: store (set by :class:`~._replicas.Replicas`); ``None``: this process alone.
        self.shared_routing: Callable[[str], SharedRouting] | None = None
        #: Where this server's responses wait their eager rounds (:mod:`._eager`).
        self.eager = EagerLot()

    async def read_body(
        self,
        scope: MutableMapping[str, Any],
        receive: Receive,
        caller: Caller | None,
        *,
        buffered: bool = False,
    ) -> bytes:
        """A request's whole body, within ``max_body_size`` and ``body_timeout``, counted
        against its client's share of the inbound budget while it arrives (:mod:`._inbound`)."""
        limits = self.limits
        client = self.client_key(scope, caller)
        if buffered:
            # The whole body came with the head: nothing is being received any more,
            # so it is only checked against the budget (taking its bytes and giving
            # them back at once, with no checkpoint between, would be the same).
            message = await receive()
            body = whole_body(message, limits.max_body_size)
            if body is not None:
                self.inbound.check(client, len(body))
                return body
        else:
            message = None
        with self.inbound.receiving(client) as reservation:
            return await read_body(
                receive,
                limit=limits.max_body_size,
                timeout=limits.body_timeout,
                reservation=reservation,
                first=message,  # a first part read above (the body was not whole)
            )

    def client_key(self, scope: MutableMapping[str, Any], caller: Caller | None) -> str | None:
        """The key the sessions of ``scope``'s request, sent by ``caller`` (``None``: not
        authenticated), are budgeted under (:mod:`._fairness`)."""
        return client_key(scope, caller.identity if caller is not None else None)

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
                await nursery.start(self.eager.run)
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            for channel in list(self._scopes):
                channel.close()

    def get(self, session_id: str) -> HttpSessionChannel | None:
        return self._sessions.get(session_id)

    def create(
        self, *, stateless: bool = False, resumable: bool = True, client: str | None = None
    ) -> HttpSessionChannel:
        """Start a new session; 503 when the table is full or the server is not running.

        A session with an id (``stateless=False``: opened by ``initialize``) counts
        towards ``client``'s budget (429 beyond it) and must finish its handshake in
        time (module doc). Sessions of one POST (``stateless``) are requests rather
        than sessions: bounded by the connections that carry them, not per client.
        ``resumable=False`` gives it no event store (stateless-era POSTs: the era has no
        resumability, so no event ids or priming events either).
        """
        owner = None if stateless else client
        self._check_room(owner)
        session_id = None if stateless else new_session_id()
        shared = None
        if session_id is not None and self.shared_routing is not None:
            shared = self.shared_routing(session_id)
        factory = self.store_factory if resumable and shared is None else None
        store = factory() if factory is not None else None
        channel = HttpSessionChannel(session_id, self.limits, store, self.session_output(), shared)
        channel.eager = self.eager
        if session_id is not None:
            self._sessions[session_id] = channel
        self._spawn(channel, owner, handshake=not stateless)
        return channel

    def take_stateless(self, *, pooled: bool = True) -> HttpSessionChannel:
        """A session for one stateless-era POST: an idle one an earlier POST gave back
        (:meth:`recycle`), else a new one (503 as for :meth:`create`).

        The era keeps no state between requests (each carries its version and
        capabilities), so one session serves POST after POST, one at a time, and a
        request costs no session built and torn down. The session knows each request
        by an id of the server's choosing (:meth:`request_id`), never reused, so a
        client's id can never meet one still unwinding there; the answer carries the
        client's (``wire_ids``); its handler sees the server's. Each borrower gets a
        ``lease`` of its own (what is kept per caller is keyed by it, not by the
        session). ``pooled=False``: a new session, which the POST ends
        (:meth:`terminate`).
        """
        channel = None
        while pooled and self._pool:
            channel, _ = self._pool.popitem()
            if channel.idle:
                break
            self.terminate(channel)
            channel = None
        if channel is None:
            channel = self.create(stateless=True, resumable=False)
            channel.stateless_era = True
        channel.lease = object()
        return channel

    def request_id(self) -> int:
        """A request id no session of :meth:`take_stateless` has seen."""
        return next(self._request_ids)

    def recycle(self, channel: HttpSessionChannel) -> None:
        """A stateless-era POST is over: its session waits for the next one if it is
        idle (its request answered, nothing left on it) and fewer than
        ``stateless_pool`` wait already; else it ends, as one a client left does."""
        room = len(self._pool) < self.limits.stateless_pool
        if channel.idle and room and self._nursery is not None:
            channel.reuse()
            self._pool[channel] = None
        else:
            self.terminate(channel)

    def session_output(self) -> ByteBudget:
        """A new session's output budget, inside the server's."""
        return ByteBudget(self.limits.output_session_bytes, self.output)

    def restore(self, record: SessionRecord, shared: SharedRouting) -> HttpSessionChannel:
        """Serve here a replica of a session of a shared store, restored from its
        ``record`` (see :mod:`._replicas`); 503 as for :meth:`create`."""
        self._check_room(None)
        channel = HttpSessionChannel(
            record.session_id, self.limits, None, self.session_output(), shared
        )
        channel.owner = record.owner
        channel.eager = self.eager
        shared.restored = record
        if record.protocol_version is not None:
            channel.negotiated(record.protocol_version)
        self._sessions[record.session_id] = channel
        # Its handshake happened elsewhere (its record holds the outcome); its client
        # was budgeted there, where it opened the session.
        self._spawn(channel, None, handshake=False)
        return channel

    def shared_channels(self) -> list[HttpSessionChannel]:
        """The sessions with an id served here now."""
        return list(self._sessions.values())

    def adopt(self, channel: ManagedChannel, *, client: str | None = None) -> None:
        """Serve a session of another transport (legacy HTTP+SSE) beside these.

        It counts towards ``max_sessions`` and ``client``'s budget, must finish its
        handshake in time, and ends with the manager, but its id is not in the table
        :meth:`get` reads, and the idle reaper leaves it alone (it lives as long as its
        own stream). 503 and 429 as for :meth:`create`.
        """
        self._check_room(client)
        self._spawn(channel, client, handshake=True)

    def _check_room(self, client: str | None) -> None:
        limits = self.limits
        retry = [(b"retry-after", str(limits.retry_after).encode())]
        if self._nursery is None:
            raise HttpError(
                503, "Service Unavailable: the server is not running", code=SERVER_ERROR
            )
        if client is not None and self._clients[client] >= limits.max_sessions_per_client:
            raise HttpError(
                429,
                "Too Many Requests: too many sessions for this client",
                code=SERVER_ERROR,
                headers=retry,
            )
        if len(self._scopes) >= limits.max_sessions and not self._shed_idle():
            raise HttpError(
                503, "Service Unavailable: too many sessions", code=SERVER_ERROR, headers=retry
            )

    def _shed_idle(self) -> bool:
        """Make room by ending an idle stateless-era session, else one still in its
        handshake (:meth:`_shed_handshake`); ``False`` when neither is."""
        if self._pool:
            self.terminate(next(iter(self._pool)))
            return True
        return self._shed_handshake()

    def _shed_handshake(self) -> bool:
        """End the oldest session still in its handshake, of the client with the most
        of them, to make room; ``False`` when none is."""
        victim = oldest_of_heaviest(self._handshaking, self._client_of.get)
        if victim is None:
            return False
        logger.info(
            "session table full: ended session %s, still in its handshake", victim.session_id
        )
        self.terminate(victim)
        return True

    def _spawn(self, channel: ManagedChannel, client: str | None, *, handshake: bool) -> None:
        assert self._nursery is not None
        scope = trio.CancelScope()
        self._scopes[channel] = scope
        channel.on_close = scope.cancel
        if client is not None:
            self._clients[client] += 1
            self._client_of[channel] = client
        if handshake:
            scope.deadline = trio.current_time() + self.limits.handshake_timeout
            self._handshaking[channel] = None
            channel.on_initialized = partial(self._initialized, channel, scope)
        self._nursery.start_soon(self._serve, channel, scope)

    def _initialized(self, channel: ManagedChannel, scope: trio.CancelScope) -> None:
        scope.deadline = math.inf
        self._handshaking.pop(channel, None)

    def terminate(self, channel: ManagedChannel) -> None:
        """End the session now: its tasks are cancelled and its id is forgotten."""
        channel.close()
        self._forget(channel)

    def _forget(self, channel: ManagedChannel) -> None:
        if channel.output is not None:
            channel.output.close()
        self._scopes.pop(channel, None)
        self._handshaking.pop(channel, None)
        self._pool.pop(channel, None)  # type: ignore[call-overload]
        client = self._client_of.pop(channel, None)
        if client is not None:
            self._clients[client] -= 1
            if not self._clients[client]:
                del self._clients[client]
        if channel.session_id is not None and self._sessions.get(channel.session_id) is channel:
            del self._sessions[channel.session_id]

    async def _serve(self, channel: ManagedChannel, scope: trio.CancelScope) -> None:
        try:
            with scope:
                await self.serve_session(channel)
            if channel in self._handshaking and scope.cancelled_caught:
                logger.info(
                    "session %s: no notifications/initialized within %g s: ended",
                    channel.session_id,
                    self.limits.handshake_timeout,
                )
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

"""Graceful shutdown of a :class:`~trimcp.server.Server` and every ``serve_*`` of it.

``await server.shutdown()`` (from any task of the Trio run that serves it) ends all of
the server's serving in four steps:

1. **Stop taking work.** Every live session answers each new request with
   ``-32000 Server is shutting down``; answers, notifications and
   ``notifications/cancelled`` still flow, so running handlers can finish their reverse
   calls. Each transport also refuses what is new to it: the HTTP app answers a POST
   carrying a request with ``503`` (``Retry-After``) and that JSON-RPC error (POSTs of
   answers and notifications still pass, so ``serve_http`` keeps accepting
   connections until the end); ``serve_websocket`` stops accepting
   connections; a session opened meanwhile (an ASGI WebSocket, an in-memory client)
   refuses its requests too and ends with the others.
2. **End the listens.** Every ``subscriptions/listen`` stream (2026-07-28) ends with
   its ``SubscriptionsListenResult``, as the specification asks: at once, and again at
   each poll of the grace, so a listen queued behind other requests ends as it starts.
3. **Grace.** Running and queued requests get ``grace`` seconds (default
   :data:`DEFAULT_SHUTDOWN_GRACE`, 5 s) to finish; their answers are sent. Shutdown
   moves on as soon as every session is idle (checked every :data:`POLL_INTERVAL`).
4. **Cancel.** The requests still running are cancelled and get no response, as any
   cancelled request (design invariant 2; over HTTP their POST ends with the 503
   above, carrying the request's id). Then every session is closed, and each
   ``serve_*`` function returns once its sessions have ended and its last responses
   are written (``serve_http``: at most :data:`FLUSH_TIMEOUT` more; hypercorn: its
   ``graceful_timeout``).

A handler that ignores cancellation (a shielded scope, a thread that cannot be
abandoned) cannot be abandoned under structured concurrency: Trio cannot stop a task,
and the nursery that owns it waits for it. Shutdown waits ``abandon_after`` seconds
(default :data:`DEFAULT_ABANDON_AFTER`) for cancelled handlers, then logs a warning
naming each request still running (id and method) on the ``trimcp.server`` logger and
returns, so ``await server.shutdown()`` itself is bounded by
``grace + abandon_after``. The sessions are closed all the same; the ``serve_*``
function that owns such a session returns when that handler finally ends, and its
request never gets a response.

Work that is not a request is not drained: tasks (of both kinds, ``server.tasks``) are
cancelled when the serve function that carried them ends, and work handed off with
``detach_for_background`` when its session ends, as without a shutdown.

Cancelling the task awaiting :meth:`ShutdownControl.shutdown` cuts the grace short:
every session is closed at once. A second call while one runs waits for that one. Once
a shutdown has run, the server may be served again (an app of :func:`~trimcp.asgi_app`
made before it keeps refusing requests: make a new one).

A server mounted in another ASGI server (the app of :func:`~trimcp.asgi_app` under
hypercorn) is shut down the same way; pass
``shutdown_trigger=server.shutdown_control.wait_done`` to hypercorn so it stops
once the sessions have ended.
"""

from __future__ import annotations

import logging
from typing import Final, final

import trio

from trimcp.nursery import (
    Session,
    cancel_requests,
    is_idle,
    refuse_requests,
    running_requests,
)

from ._subscriptions import SubscriptionHub

__all__ = [
    "DEFAULT_ABANDON_AFTER",
    "DEFAULT_SHUTDOWN_GRACE",
    "FLUSH_TIMEOUT",
    "POLL_INTERVAL",
    "ShutdownControl",
    "ShutdownRound",
]

logger = logging.getLogger("trimcp.server")

#: Seconds running requests get to finish once a shutdown is asked for.
DEFAULT_SHUTDOWN_GRACE: Final = 5.0
#: Seconds cancelled handlers get to end before shutdown warns about them and returns.
DEFAULT_ABANDON_AFTER: Final = 1.0
#: Seconds an HTTP server of ``serve_http`` keeps writing responses after the sessions
#: have ended (the answers of the grace period, the ends of their streams).
FLUSH_TIMEOUT: Final = 1.0
#: How often shutdown checks whether the sessions are idle (only while shutting down).
POLL_INTERVAL: Final = 0.01


@final
class ShutdownRound:
    """One shutdown: ``requested`` when it starts, ``finished`` when its sessions are
    closed. A ``serve_*`` function watches the round that was current when it started."""

    __slots__ = ("finished", "requested")

    def __init__(self) -> None:
        self.requested = trio.Event()
        self.finished = trio.Event()


@final
class ShutdownControl:
    """The graceful shutdown of one server's sessions; see the module doc."""

    def __init__(self, sessions: set[Session], subscriptions: SubscriptionHub) -> None:
        self._sessions = sessions  # the server's own live set
        self._subscriptions = subscriptions
        self.round = ShutdownRound()

    @property
    def requested(self) -> bool:
        """Whether a shutdown is under way."""
        return self.round.requested.is_set()

    async def wait_done(self) -> None:
        """Return once the current (or next) shutdown has closed every session."""
        await self.round.finished.wait()

    def admit(self, session: Session) -> None:
        """A session that starts during a shutdown refuses its requests at once."""
        if self.requested:
            refuse_requests(session)

    async def shutdown(self, grace: float, abandon_after: float) -> None:
        """Run the four steps of the module doc; bounded by ``grace + abandon_after``."""
        current = self.round
        if current.requested.is_set():
            await current.finished.wait()
            return
        current.requested.set()
        try:
            for session in list(self._sessions):
                refuse_requests(session)
            await self._wait_idle(grace, end_listens=True)
            for session in list(self._sessions):
                cancel_requests(session)
            if not await self._wait_idle(abandon_after, end_listens=False):
                self._warn_stubborn(abandon_after)
        finally:
            for session in list(self._sessions):
                session.close()
            self.round = ShutdownRound()
            current.finished.set()

    async def _wait_idle(self, seconds: float, *, end_listens: bool) -> bool:
        """Wait up to ``seconds`` for every session to be idle; whether they are.

        With ``end_listens``, listens are ended at once and again at each poll: a
        listen request that was queued behind others starts after the first call.
        """
        # Polled, and only while shutting down: an event would cost the per-request
        # path a wake-up check on every answer, for the sake of one shutdown.
        with trio.move_on_after(seconds):
            while True:
                if end_listens:
                    self._subscriptions.end_all()
                if all(is_idle(session) for session in self._sessions):
                    return True
                await trio.sleep(POLL_INTERVAL)
        return False

    def _warn_stubborn(self, waited: float) -> None:
        for session in self._sessions:
            for request_id, method in running_requests(session):
                logger.warning(
                    "shutdown: request %r (%s) ignored its cancellation for %g s; it gets "
                    "no response, and its serve function returns only once it ends",
                    request_id,
                    method,
                    waited,
                )

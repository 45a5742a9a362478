"""Draining a session for a graceful shutdown: refuse new work, wait, then cancel.

The server's shutdown (:mod:`trimcp.server._shutdown`) drives these steps over every
session it serves; they live here because they read the session's request table.

* :func:`refuse_requests` moves the session's lifecycle to *draining*
  (:mod:`._lifecycle`): every new request is answered with :data:`SHUTTING_DOWN`.
  Answers, notifications and ``notifications/cancelled`` still flow, so handlers still
  running can finish their reverse calls and the peer can still give up on them.
* :func:`is_idle`: no request in flight or queued, and no answer still on its way
  out (an answer is waited for until the transport has taken it).
* :func:`cancel_requests` cancels every running handler's scope, as the session's end
  does: a request cancelled this way gets no response (invariant 2).
* :func:`running_requests` names the requests still running, for the warning about a
  handler that ignores its cancellation.
"""

from __future__ import annotations

from trimcp.wire import RequestId

from ._lifecycle import SHUTTING_DOWN, Event
from ._session import Session

__all__ = [
    "SHUTTING_DOWN",
    "cancel_requests",
    "is_idle",
    "refuse_requests",
    "running_requests",
]


def refuse_requests(session: Session) -> None:
    """From now on, answer every new request of ``session`` with :data:`SHUTTING_DOWN`.

    Requests already admitted (running or queued) are not affected.
    """
    session.lifecycle.handle(Event.SHUTDOWN)


def is_idle(session: Session) -> bool:
    """Whether no request is running or queued and no answer is being sent."""
    return not session._in_flight and session._answering == 0


def cancel_requests(session: Session) -> None:
    """Cancel every request running or queued; none of them gets a response."""
    for entry in list(session._in_flight.values()):
        entry.peer_cancelled = True
        entry.scope.cancel()


def running_requests(session: Session) -> list[tuple[RequestId, str]]:
    """``(id, method)`` of each request still running or queued."""
    return [
        (request_id, entry.ctx.method if entry.ctx is not None else "?")
        for request_id, entry in session._in_flight.items()
    ]

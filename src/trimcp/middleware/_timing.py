"""Timing and structured request logging: one record per request, both directions.

:class:`RequestWatcher` pairs each request with its answer (or its cancellation) in
both directions of a role, and hands one :class:`Completed` record to
:meth:`RequestWatcher.completed`. :class:`Timing` keeps per-method statistics (and calls
``on_completed``); :class:`~trimcp.middleware.RequestLogging` logs each record.

The duration of an inbound request runs from when it passed this middleware on its way
in until its answer passed on its way out; of an outbound one, from its way out until
its answer came in. Install it outermost to include the time inner middleware take.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, final

import attrs
import trio

from trimcp.dispatch import CallNext
from trimcp.nursery import Session
from trimcp.wire import ErrorResponse, Message, Notification, Request, RequestId, Response

from ._base import DEFAULT_MAX_TRACKED, Requests, RoleMiddleware

__all__ = ["DEFAULT_MAX_METHODS", "Completed", "MethodStats", "RequestWatcher", "Timing"]

#: Distinct (direction, method) pairs :class:`Timing` keeps statistics for; the rest are
#: counted under the method ``"other"`` (a hostile peer can invent any number of names).
DEFAULT_MAX_METHODS: Final = 256

Direction = Literal["inbound", "outbound"]
Outcome = Literal["ok", "error", "tool_error", "cancelled"]


@final
@attrs.frozen
class Completed:
    """One request, from its way in (or out) to its answer."""

    direction: Direction
    method: str
    #: The tool or prompt name, or the resource URI, when the request names one.
    target: str | None
    request_id: RequestId
    seconds: float
    outcome: Outcome
    #: The JSON-RPC error code of an ``error`` outcome.
    error_code: int | None
    session: Session = attrs.field(repr=False, eq=False)


@attrs.define
class _Started:
    method: str
    target: str | None
    at: float


class RequestWatcher(RoleMiddleware):
    """Pairs requests with their answers; subclasses implement :meth:`completed`."""

    def __init__(self, *, max_tracked: int = DEFAULT_MAX_TRACKED) -> None:
        self._inbound: Requests[_Started] = Requests(max_tracked)
        self._outbound: Requests[_Started] = Requests(max_tracked)

    def completed(self, record: Completed) -> None:
        """One request is over (called in the task that passed its answer)."""
        raise NotImplementedError

    def received(self, session: Session, message: Message, call_next: CallNext) -> Awaitable[None]:
        self._watch(session, message, incoming=True)
        return call_next(message)

    def sending(self, session: Session, message: Message, call_next: CallNext) -> Awaitable[None]:
        self._watch(session, message, incoming=False)
        return call_next(message)

    def _watch(self, session: Session, message: Message, *, incoming: bool) -> None:
        if isinstance(message, Request):
            table = self._inbound if incoming else self._outbound
            table.note(session, message.id, _Started(message.method, _target(message), _now()))
        elif isinstance(message, Response | ErrorResponse):
            # An answer coming in ends an outbound request, one going out an inbound one.
            direction: Direction = "outbound" if incoming else "inbound"
            table = self._outbound if incoming else self._inbound
            self._end(session, direction, table.pop(session, message.id), message)
        elif isinstance(message, Notification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if isinstance(request_id, str | int):
                direction = "inbound" if incoming else "outbound"
                table = self._inbound if incoming else self._outbound
                self._end(session, direction, table.pop(session, request_id), None, request_id)

    def _end(
        self,
        session: Session,
        direction: Direction,
        started: _Started | None,
        answer: Response | ErrorResponse | None,
        request_id: RequestId | None = None,
    ) -> None:
        if started is None:
            return
        outcome: Outcome = "cancelled"
        code = None
        if isinstance(answer, ErrorResponse):
            outcome, code = "error", answer.error.code
        elif isinstance(answer, Response):
            tool_error = started.method == "tools/call" and answer.result.get("isError") is True
            outcome = "tool_error" if tool_error else "ok"
        rid = answer.id if answer is not None and answer.id is not None else request_id
        assert rid is not None
        self.completed(
            Completed(
                direction,
                started.method,
                started.target,
                rid,
                _now() - started.at,
                outcome,
                code,
                session,
            )
        )


@final
@attrs.define
class MethodStats:
    """Counts and durations of one method in one direction."""

    count: int = 0
    errors: int = 0
    cancelled: int = 0
    total_seconds: float = 0.0
    max_seconds: float = 0.0

    @property
    def mean_seconds(self) -> float:
        return self.total_seconds / self.count if self.count else 0.0


@final
class Timing(RequestWatcher):
    """Per-method request statistics, and a callback per request.

    Args:
      on_completed: called with each :class:`Completed` record (must not block).
      max_methods: distinct ``(direction, method)`` keys kept
        (:data:`DEFAULT_MAX_METHODS`); further methods count as ``"other"``.
      max_tracked: requests remembered per session while they wait for an answer.

    ``stats[("inbound", "tools/call")]`` is a :class:`MethodStats`.
    """

    def __init__(
        self,
        on_completed: Callable[[Completed], Any] | None = None,
        *,
        max_methods: int = DEFAULT_MAX_METHODS,
        max_tracked: int = DEFAULT_MAX_TRACKED,
    ) -> None:
        super().__init__(max_tracked=max_tracked)
        self.on_completed = on_completed
        self.max_methods = max_methods
        self.stats: dict[tuple[Direction, str], MethodStats] = {}

    def completed(self, record: Completed) -> None:
        key = (record.direction, record.method)
        stats = self.stats.get(key)
        if stats is None:
            if len(self.stats) >= self.max_methods:
                key = (record.direction, "other")
            stats = self.stats.setdefault(key, MethodStats())
        stats.count += 1
        stats.errors += record.outcome in ("error", "tool_error")
        stats.cancelled += record.outcome == "cancelled"
        stats.total_seconds += record.seconds
        stats.max_seconds = max(stats.max_seconds, record.seconds)
        if self.on_completed is not None:
            self.on_completed(record)


def _now() -> float:
    return trio.current_time()


def _target(request: Request) -> str | None:
    params = request.params or {}
    if request.method in ("tools/call", "prompts/get"):
        name = params.get("name")
        return name if isinstance(name, str) else None
    if request.method.startswith("resources/"):
        uri = params.get("uri")
        return uri if isinstance(uri, str) else None
    return None

"""The bounds of one session, each with its documented default.

Every table and queue a session keeps is bounded (design invariant 7). A limit that is
reached either applies backpressure (the session stops reading, or the caller waits) or
produces a clear error; it never lets memory grow without bound.
"""

from __future__ import annotations

from typing import Any, final

import attrs

__all__ = ["SessionLimits"]


def _positive(_inst: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


@final
@attrs.frozen(kw_only=True)
class SessionLimits:
    """Bounds and timeouts of one session.

    Attributes:
      max_in_flight: inbound requests handled at once (default 100). When reached the
        session stops reading from its transport until one finishes: backpressure, not
        an error, so nothing that was accepted is lost.
      max_queued: inbound requests read while ``max_in_flight`` handlers run, waiting
        for a slot (default 32). Only when this queue is full does the session stop
        reading; until then it keeps reading answers and notifications, so handlers at
        the cap still receive the answers to their own reverse calls.
      max_pending: outbound requests waiting for an answer at once (default 10 000).
        Further callers wait for a free slot.
      max_reverse_calls: requests a handler side may have outstanding towards its peer
        from handler contexts (sampling, elicitation, roots; default 16). Further
        reverse calls wait.
      request_timeout: seconds an outbound request waits for its answer (default 60;
        a call's own ``timeout=`` replaces it). Each progress notification for it
        restarts that wait ...
      max_request_timeout: ... up to this total (default 600), whatever progress says.
      cancel_send_timeout: seconds the shielded ``notifications/cancelled`` send of a
        request that was given up may take (default 2).
      handler_timeout: optional deadline in seconds for each inbound request's handler
        (default ``None``: no deadline). A handler that overruns it is cancelled and the
        request is answered with ``-32001 Request timed out``.
      max_background: detached tasks (``detach_for_background``) one session runs at
        once (default 100). One more raises :class:`~trimcp.nursery.BackgroundLimitError`
        (``-32000``, which a handler that lets it propagate answers with).
      max_queued_notifications: notifications queued from synchronous code
        (``list_changed``, ``resources/updated``) and not yet written (default 256).
        A notification already queued is not queued twice; beyond the bound new ones
        are dropped, counted (``Session.dropped_notifications``) and logged.
      max_queued_callbacks: notifications one callback kind (each notification method,
        and each call's progress) holds while its callback is busy (default 64). Beyond
        it the oldest is dropped, counted (``Session.dropped_callbacks``) and logged.
      eof_grace: seconds the requests already read get to finish and be answered once
        the input has ended cleanly while the output still works (a stdio client that
        closed the server's stdin; default 5, the shutdown grace). Then the rest are
        cancelled and the session ends.
    """

    max_in_flight: int = attrs.field(default=100, validator=_positive)
    max_queued: int = attrs.field(default=32, validator=_positive)
    max_pending: int = attrs.field(default=10_000, validator=_positive)
    max_reverse_calls: int = attrs.field(default=16, validator=_positive)
    request_timeout: float = attrs.field(default=60.0, validator=_positive)
    max_request_timeout: float = attrs.field(default=600.0, validator=_positive)
    cancel_send_timeout: float = attrs.field(default=2.0, validator=_positive)
    handler_timeout: float | None = attrs.field(default=None, validator=_positive)
    max_background: int = attrs.field(default=100, validator=_positive)
    max_queued_notifications: int = attrs.field(default=256, validator=_positive)
    max_queued_callbacks: int = attrs.field(default=64, validator=_positive)
    eof_grace: float = attrs.field(default=5.0, validator=_positive)

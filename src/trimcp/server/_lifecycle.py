"""The server side of the handshake-era lifecycle, as one table.

Rule: everything that decides whether a request may be handled in the current phase
lives in this file.

=====================  ===========================  ====================================
phase                  requests accepted            how it is left
=====================  ===========================  ====================================
AWAITING_INITIALIZE    ``initialize``, ``ping``     ``initialize`` answered
OPERATING              everything but               the session ends
                       ``initialize``
=====================  ===========================  ====================================

A request outside its phase is answered ``-32600 Invalid Request`` naming the reason. The
spec asks clients to send ``notifications/initialized`` before other requests; trimcp
records it (``SessionState.ready``) but does not refuse requests that arrive between the
``initialize`` answer and that notification, because on Streamable HTTP the two travel
on separate connections and may overtake each other.
"""

from __future__ import annotations

import enum

from trimcp.dispatch import McpError
from trimcp.nursery import SessionState
from trimcp.wire import INVALID_REQUEST

__all__ = ["Phase", "check_request", "phase_of"]


class Phase(enum.Enum):
    AWAITING_INITIALIZE = "awaiting initialize"
    OPERATING = "operating"


_ALLOWED: dict[Phase, frozenset[str] | None] = {
    Phase.AWAITING_INITIALIZE: frozenset({"initialize", "ping"}),
    Phase.OPERATING: None,  # everything but a second initialize
}


def phase_of(state: SessionState) -> Phase:
    return Phase.OPERATING if state.initialized else Phase.AWAITING_INITIALIZE


def check_request(state: SessionState, method: str) -> None:
    """Raise the ``-32600`` for ``method`` if the session's phase does not accept it."""
    phase = phase_of(state)
    allowed = _ALLOWED[phase]
    if allowed is None:
        if method == "initialize":
            raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
        return
    if method not in allowed:
        raise McpError(INVALID_REQUEST, "Invalid Request: the session is not initialized")

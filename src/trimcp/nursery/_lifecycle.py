"""The lifecycle of a session, as one table: (role, phase, event) -> (action, next phase).

Theory of operation
-------------------
Rule 1, after h11: everything that decides what a session may do in its current phase
lives in this file. A session's phase changes only through :meth:`Lifecycle.handle`,
the one place :data:`TRANSITIONS` is read, and a pair that is not in the table is an
error naming the role, the phase and the event: a :class:`LifecycleError` (answered
``-32600``) for what the peer sent, a :class:`~trimcp.wire.LocalProtocolError` for what
this side did, since that is a bug here and never the peer's fault.

Events are named by what happened, whichever side did it: :attr:`Event.INITIALIZE` is
the ``initialize`` request a server *received* and a client *sent*. The session's
reader feeds in every inbound request (``INITIALIZE``, ``PING``, ``REQUEST``) before
admitting it, and ``notifications/initialized`` on the server; the session feeds in the
outcome of a server's ``initialize`` once its answer is written, the end of the input,
a graceful shutdown and the close. The client's handshake feeds in its own steps.

The actions the reader carries out:

* ``ACCEPT``: admit the request (or take note of the event).
* ``BARRIER``: admit it, then read nothing more until it has been answered: nothing
  read after an ``initialize`` is judged before it has completed (design invariant 10),
  so a client that pipelines ``initialize``, ``notifications/initialized`` and
  ``tools/list`` gets all three answered.
* ``IGNORE``: a notification with nothing to do (a repeated ``initialized``).
* ``REFUSE_*``: answer the request with the error :data:`REFUSALS` names.

Requests that carry their own version and capabilities (the stateless era) are judged
by the layer above, which tells the session so (``exempt``); the session consults it
only where the table would refuse or hold the request, so the hot path pays nothing.

Between the ``initialize`` answer and ``notifications/initialized`` (``INITIALIZED``)
requests are accepted: the spec asks clients to send the notification first, but on
Streamable HTTP the two travel on separate connections and may overtake each other.

The lifecycle diagram in the README is generated from :data:`TRANSITIONS`
(:func:`diagram`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, final

from trimcp.dispatch import McpError
from trimcp.wire import INVALID_REQUEST, LocalProtocolError, Request

from ._state import IdentityEnum, Phase, Role

if TYPE_CHECKING:
    from ._state import SessionState

__all__ = [
    "REFUSALS",
    "REQUEST_EVENTS",
    "SHUTTING_DOWN",
    "TRANSITIONS",
    "Action",
    "Event",
    "Lifecycle",
    "LifecycleError",
    "diagram",
    "request_event",
]

#: The error code of a request refused because the server is shutting down (the
#: implementation-defined server error of JSON-RPC 2.0).
SHUTTING_DOWN: Final = -32000


class Event(IdentityEnum):
    """What can happen to a session (see the module doc for who feeds each one in)."""

    #: An ``initialize`` request (received by a server, sent by a client).
    INITIALIZE = "initialize"
    #: ``initialize`` was answered with a result (server: written; client: received).
    INITIALIZE_ANSWERED = "initialize answered"
    #: ``initialize`` ended without a result (an error, or no answer).
    INITIALIZE_FAILED = "initialize failed"
    #: ``notifications/initialized`` (received by a server, sent by a client).
    INITIALIZED = "notifications/initialized"
    #: A ``ping`` request received.
    PING = "ping"
    #: Any other request received.
    REQUEST = "request"
    #: The client adopted the stateless era (``server/discover`` answered).
    DISCOVERED = "server/discover answered"
    #: A graceful shutdown began: new requests are refused.
    SHUTDOWN = "shutdown"
    #: The input ended cleanly while the output may still work (a half-close).
    INPUT_ENDED = "input ended"
    #: The session ended.
    CLOSE = "close"
    #: A server session whose method table has no ``initialize`` (a bare engine
    #: session): there is no handshake to wait for, it operates from the start.
    NO_HANDSHAKE = "no handshake"


class Action(IdentityEnum):
    """What the session does about an event."""

    ACCEPT = "accept"
    BARRIER = "accept, then read nothing more until it is answered"
    IGNORE = "ignore"
    REFUSE_NOT_INITIALIZED = "refuse: not initialized"
    REFUSE_INITIALIZED = "refuse: already initialized"
    REFUSE_SHUTTING_DOWN = "refuse: shutting down"


#: The answer to each refusal: (code, message).
REFUSALS: Final[dict[Action, tuple[int, str]]] = {
    Action.REFUSE_NOT_INITIALIZED: (
        INVALID_REQUEST,
        "Invalid Request: the session is not initialized",
    ),
    Action.REFUSE_INITIALIZED: (
        INVALID_REQUEST,
        "Invalid Request: the session is already initialized",
    ),
    Action.REFUSE_SHUTTING_DOWN: (SHUTTING_DOWN, "Server is shutting down"),
}

#: The events of inbound requests: every other method is ``REQUEST``.
#: The events of inbound requests other than :attr:`Event.REQUEST`, by method.
REQUEST_EVENTS: Final = {"initialize": Event.INITIALIZE, "ping": Event.PING}

_E = Event
_A = Action
_P = Phase
_Row = dict[Event, tuple[Action, Phase]]


def _stay(phase: Phase, action: Action, *events: Event) -> _Row:
    """Rows for ``events`` that leave the session in ``phase``."""
    return {event: (action, phase) for event in events}


def _ending() -> _Row:
    """What every live phase shares: a shutdown and the input's end drain, close ends."""
    return {
        _E.SHUTDOWN: (_A.ACCEPT, _P.DRAINING),
        _E.INPUT_ENDED: (_A.ACCEPT, _P.DRAINING),
        _E.CLOSE: (_A.ACCEPT, _P.CLOSED),
    }


#: Events that may still arrive once a session drains or has closed: an initialize
#: still running when the drain began, a repeated shutdown, a second close.
_LATE: Final = (_E.INITIALIZE_ANSWERED, _E.INITIALIZE_FAILED, _E.SHUTDOWN)
_CLOSED: Final[_Row] = _stay(_P.CLOSED, _A.IGNORE, *_LATE, _E.CLOSE)

_SERVER: dict[Phase, _Row] = {
    _P.NEW: {
        _E.NO_HANDSHAKE: (_A.ACCEPT, _P.OPERATING),
        _E.INITIALIZE: (_A.BARRIER, _P.INITIALIZING),
        _E.PING: (_A.ACCEPT, _P.NEW),
        _E.REQUEST: (_A.REFUSE_NOT_INITIALIZED, _P.NEW),
        _E.INITIALIZED: (_A.IGNORE, _P.NEW),
        **_ending(),
    },
    # The reader holds still while initialize runs: only its outcome and the ends occur.
    _P.INITIALIZING: {
        _E.INITIALIZE_ANSWERED: (_A.ACCEPT, _P.INITIALIZED),
        _E.INITIALIZE_FAILED: (_A.ACCEPT, _P.NEW),
        **_ending(),
    },
    _P.INITIALIZED: {
        **_stay(_P.INITIALIZED, _A.ACCEPT, _E.PING, _E.REQUEST),
        _E.INITIALIZE: (_A.REFUSE_INITIALIZED, _P.INITIALIZED),
        _E.INITIALIZED: (_A.ACCEPT, _P.OPERATING),
        **_ending(),
    },
    _P.OPERATING: {
        **_stay(_P.OPERATING, _A.ACCEPT, _E.PING, _E.REQUEST),
        _E.INITIALIZE: (_A.REFUSE_INITIALIZED, _P.OPERATING),
        _E.INITIALIZED: (_A.IGNORE, _P.OPERATING),
        **_ending(),
    },
    _P.DRAINING: {
        **_stay(_P.DRAINING, _A.REFUSE_SHUTTING_DOWN, _E.INITIALIZE, _E.PING, _E.REQUEST),
        **_stay(_P.DRAINING, _A.IGNORE, _E.INITIALIZED, *_LATE, _E.INPUT_ENDED),
        _E.CLOSE: (_A.ACCEPT, _P.CLOSED),
    },
    _P.CLOSED: _CLOSED,
}


# The client's inbound requests (the server's ping and reverse calls) are accepted in
# every live phase: a server may ping before initialize, and the spec binds its reverse
# calls to client requests, which the client judges when it makes them.
def _client_row(phase: Phase, extra: _Row) -> _Row:
    return {**_stay(phase, _A.ACCEPT, _E.PING, _E.REQUEST), **extra, **_ending()}


_CLIENT: dict[Phase, _Row] = {
    _P.NEW: _client_row(
        _P.NEW,
        {
            _E.INITIALIZE: (_A.ACCEPT, _P.INITIALIZING),
            _E.DISCOVERED: (_A.ACCEPT, _P.STATELESS),
        },
    ),
    _P.INITIALIZING: _client_row(
        _P.INITIALIZING,
        {
            _E.INITIALIZE_ANSWERED: (_A.ACCEPT, _P.INITIALIZED),
            _E.INITIALIZE_FAILED: (_A.ACCEPT, _P.NEW),
        },
    ),
    _P.INITIALIZED: _client_row(_P.INITIALIZED, {_E.INITIALIZED: (_A.ACCEPT, _P.OPERATING)}),
    _P.OPERATING: _client_row(_P.OPERATING, {}),
    _P.STATELESS: _client_row(_P.STATELESS, {_E.DISCOVERED: (_A.ACCEPT, _P.STATELESS)}),
    _P.DRAINING: {
        **_stay(_P.DRAINING, _A.ACCEPT, _E.PING, _E.REQUEST),
        **_stay(_P.DRAINING, _A.IGNORE, *_LATE, _E.INPUT_ENDED),
        _E.CLOSE: (_A.ACCEPT, _P.CLOSED),
    },
    _P.CLOSED: _CLOSED,
}

#: ``TRANSITIONS[role][phase][event] -> (action, next phase)``; see the module doc.
TRANSITIONS: Final[dict[Role, dict[Phase, _Row]]] = {Role.SERVER: _SERVER, Role.CLIENT: _CLIENT}

#: Events only the peer causes: a missing transition for one is the peer's error.
_REMOTE: Final = frozenset({Event.PING, Event.REQUEST})
#: Actions the layer above may overrule for a request it judges itself (``exempt``).
_EXEMPTIBLE: Final = frozenset(
    {Action.BARRIER, Action.REFUSE_NOT_INITIALIZED, Action.REFUSE_INITIALIZED}
)


class LifecycleError(McpError):
    """The peer sent something the session's phase does not allow (``-32600``)."""

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_REQUEST, message)


def request_event(method: str) -> Event:
    """The event of an inbound request for ``method``."""
    return REQUEST_EVENTS.get(method, Event.REQUEST)


@final
class Lifecycle:
    """The phase of one session and the one function that moves it (see the module doc).

    The phase is kept in the session's :class:`SessionState` (``state.phase``), where
    handlers read it as ``ctx.session.initialized`` and the like. ``exempt`` names the
    requests the layer above judges itself (see the module doc).
    """

    __slots__ = ("_table", "exempt", "role", "state")

    def __init__(
        self,
        role: Role,
        state: SessionState,
        exempt: Callable[[Request], bool] | None = None,
    ) -> None:
        self.role = role
        self.state = state
        self.exempt = exempt
        self._table = TRANSITIONS[role]

    @property
    def phase(self) -> Phase:
        return self.state.phase

    def handle(self, event: Event, request: Request | None = None) -> Action:
        """Take ``event`` (caused by ``request``, if it is an inbound one) in the current
        phase: move to the next phase and return what to do.

        Raises :class:`LifecycleError` (the peer's event) or
        :class:`~trimcp.wire.LocalProtocolError` (this side's) for a pair the table
        does not have.
        """
        state = self.state
        found = self._table[state.phase].get(event)
        if found is None:
            where = f"the {self.role.value} session is {state.phase.value}"
            if event in _REMOTE or (event is Event.INITIALIZED and self.role is Role.SERVER):
                raise LifecycleError(f"Invalid Request: {event.value} while {where}")
            raise LocalProtocolError(f"{event.value} is not allowed while {where}")
        action, after = found
        if (
            action in _EXEMPTIBLE
            and request is not None
            and self.exempt is not None
            and self.exempt(request)
        ):
            return Action.ACCEPT  # the layer above judges it; the phase stays
        state.phase = after
        return action


def diagram(role: Role) -> list[str]:
    """The transitions of ``role`` that change the phase, one ``phase --event--> phase``
    line each (the README's lifecycle diagram is made from these)."""
    lines = []
    for phase, row in TRANSITIONS[role].items():
        for event, (action, after) in row.items():
            if after is not phase:
                lines.append(f"{phase.value} --{event.value} [{action.name}]--> {after.value}")
    return lines

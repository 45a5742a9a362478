"""What a Streamable HTTP server needs of a store shared by several processes.

By default every session lives in the memory of the process that created it. With a
*shared* store (``trimcp.store.RedisStore``), N processes behind a balancer serve the
same sessions: any of them serves any request. This module is the seam between the
HTTP server and such a store; the store implements :class:`SharedSessions` (without
importing this layer's internals), the server calls nothing else of it.

What is shared, and how (the store's docs say where each piece lives):

* the **session record**: who owns the session, the negotiated revision, and the
  fields the MCP server keeps of it (client info and capabilities, log level,
  subscriptions). A process that gets a request for a session it does not hold
  restores a *replica* from the record and serves the request there;
* the **event log** of every SSE stream (:class:`SharedEvents`), so that a
  ``Last-Event-ID`` reconnect landing on another process replays what was missed and
  then follows the stream live: the process writing an event relays it to the process
  *holding* the stream (the one the client is connected to);
* a **relay** between processes (:class:`Envelope`): answers to reverse calls go to
  the process that made the call (their ids say which), ``notifications/cancelled``
  to every process (the one running the request acts on it), and notices about
  sessions ending or changing;
* **liveness**: each process holds a lease; streams, reverse calls and requests of a
  process whose lease ran out are failed by whoever notices.

A store that cannot be reached raises :class:`StoreUnavailable`; the server answers
``503`` with ``Retry-After`` and never waits longer than the store's operation bound.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Protocol, final

import attrs

from trimcp.wire import RequestId

from ._event_store import EventStore, Replay
from ._guards import SERVER_ERROR, HttpError

__all__ = [
    "PROCESS_ID_SHIFT",
    "Attached",
    "Envelope",
    "Opened",
    "SessionRecord",
    "SharedEvents",
    "SharedSessions",
    "StoreUnavailable",
    "process_of",
    "unavailable",
]

#: Outbound request ids of a session served by process ``n`` start at ``n << 32``, so
#: the id of a reverse call names the process waiting for its answer (and stays below
#: 2**53, exact in every JSON implementation).
PROCESS_ID_SHIFT: Final = 32
_MAX_PROCESS: Final = 1 << (53 - PROCESS_ID_SHIFT)


def process_of(request_id: object) -> int | None:
    """The process whose session made the outbound request ``request_id`` (``None``:
    not an id of a shared session: the process that received it handles it)."""
    if not isinstance(request_id, int) or isinstance(request_id, bool) or request_id < 0:
        return None
    process = request_id >> PROCESS_ID_SHIFT
    return process if 0 < process < _MAX_PROCESS else None


class StoreUnavailable(Exception):
    """The shared store cannot be reached now; the request should be retried later."""


def unavailable(retry_after: int) -> HttpError:
    """The answer to a request that needs the shared store while it is unreachable."""
    return HttpError(
        503,
        "Service Unavailable: the session store cannot be reached",
        code=SERVER_ERROR,
        headers=[(b"retry-after", str(retry_after).encode())],
    )


@final
@attrs.frozen
class SessionRecord:
    """What every process knows of one session.

    ``fields`` are the MCP server's own (JSON texts by name: ``clientInfo``,
    ``capabilities``, ``logLevel`` ...); the transport reads only ``owner`` and
    ``protocol_version``.
    """

    session_id: str
    owner: str | None
    protocol_version: str | None
    fields: Mapping[str, str]


@final
@attrs.frozen
class Attached:
    """A stream re-attached here (``SharedEvents.attach``): what to replay, and whether
    it goes on (``live``), written by ``producer`` for the requests ``request_ids``;
    ``last_seq`` is the sequence number the replay ends at."""

    replay: Replay
    live: bool
    producer: int | None
    request_ids: tuple[RequestId, ...]
    last_seq: int
    #: Names this attachment: :meth:`SharedEvents.detach` undoes only its own.
    token: str
    #: The process that held the stream until now (``None``: none).
    previous: int | None


@final
@attrs.frozen
class Opened:
    """A stream opened here (``SharedEvents.opened``): its priming event's id, the
    attachment's token, and the process that held it before (``None``: none)."""

    event_id: str
    token: str
    previous: int | None


@final
@attrs.frozen
class Envelope:
    """One message between processes.

    ``kind`` is ``"ev"`` (an event of a stream this process holds: ``stream``, its
    sequence number ``seq``, the encoded message in ``payload``), ``"end"`` (that
    stream is complete), ``"msg"`` (an encoded client message for the session's
    replica here), ``"take"`` (another process took the stream over), ``"bye"`` (the
    session ended), ``"upd"`` (its record changed), or a kind of the MCP server's own
    (tasks, subscriptions), which the transport hands on untouched.
    """

    kind: str
    session_id: str
    stream: str = ""
    seq: int = 0
    payload: bytes = b""

    def encode(self) -> bytes:
        head = f"{self.kind}\n{self.session_id}\n{self.stream}\n{self.seq}\n".encode()
        return head + self.payload

    @classmethod
    def decode(cls, data: bytes) -> Envelope | None:
        """The envelope ``data`` carries, or ``None`` if it is not one."""
        parts = data.split(b"\n", 4)
        if len(parts) != 5 or not parts[3].isdigit():
            return None
        try:
            kind, session_id, stream = (p.decode() for p in parts[:3])
        except UnicodeDecodeError:
            return None
        return cls(kind, session_id, stream, int(parts[3]), parts[4])


class SharedEvents(EventStore, Protocol):
    """One session's SSE event log in a shared store.

    Event ids are ``"<stream>-<seq>"`` with one sequence per session across every
    process. Besides :class:`EventStore`:
    """

    async def publish(self, stream_id: str, payload: bytes, *, last: bool) -> str:
        """Store one event (``last``: it completes its stream) and relay it to the
        process holding the stream, when that is another one; its id."""
        ...

    async def opened(self, stream_id: str, request_ids: tuple[RequestId, ...]) -> Opened:
        """A stream begins here (its priming event) and is held here: who writes it
        and for which requests, so that another process can fail them if this one
        dies. For the standalone stream: the process that held it until now."""
        ...

    async def attach(self, last_event_id: str) -> Attached | None:
        """Hold the stream of ``last_event_id`` here from now on: the events after it,
        and whether more will come (``None``: unknown id)."""
        ...

    async def detach(self, stream_id: str, token: str) -> None:
        """The attachment ``token`` of ``stream_id`` ended (its client left); a later
        attachment, here or elsewhere, is left alone."""
        ...

    async def end(self, stream_id: str) -> None:
        """``stream_id`` is complete although its last event was not stored (its
        requests were cancelled); whoever holds it closes it."""
        ...


class SharedSessions(Protocol):
    """What the HTTP server needs of a shared store (module doc)."""

    #: This process's number (> 0), unique among the live processes.
    process: int
    #: The ``Retry-After`` seconds of a 503 while the store is unreachable.
    retry_after: int

    @property
    def available(self) -> bool:
        """Whether the store answered lately (``False``: requests get 503 at once)."""
        ...

    async def create_session(self, session_id: str, owner: str | None) -> None: ...

    async def load_session(self, session_id: str) -> SessionRecord | None: ...

    async def save_session(self, session_id: str, fields: Mapping[str, str]) -> None:
        """Record ``fields`` of the session and tell the other processes."""
        ...

    async def touch_session(self, session_id: str) -> None:
        """The session was used: its records live another idle period."""
        ...

    async def end_session(self, session_id: str) -> None:
        """Forget the session everywhere (``DELETE``)."""
        ...

    def events(self, session_id: str) -> SharedEvents: ...

    async def send(self, envelope: Envelope, *, to: int | None) -> None:
        """Relay ``envelope`` to process ``to`` (``None``: to every process)."""
        ...

    def on_envelope(self, handler: Callable[[Envelope], None]) -> None:
        """Call ``handler`` (synchronous, never blocking) for each envelope relayed to
        this process. A handler added later replaces none: each is called in turn."""
        ...

    def later(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` in the store's background, for what nobody waits on (bounded:
        past the bound, or when the store fails, it is dropped)."""
        ...

    async def alive(self, processes: set[int]) -> set[int]:
        """Those of ``processes`` whose lease is current."""
        ...

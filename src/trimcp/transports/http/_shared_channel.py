"""The part of an HTTP session's channel that deals with the other processes.

A channel of a session kept in a shared store (:mod:`._shared`) has a
:class:`SharedRouting`. The channel keeps its own rules (one stream per message, JSON
or SSE, outboxes that never wait); this object adds:

* **tails**: streams this process holds for its client while other processes write
  them: a request stream resumed here, or the standalone stream, which every process
  may write. Their events arrive relayed (:meth:`relayed`) and are queued on the
  stream's outbox after the replay, without repeats (sequence numbers);
* **holding**: an outbox that ends here tells the store that its attachment is over,
  so the stream's events are kept rather than relayed to nobody;
* **routing** of what the client sends: an answer to a reverse call goes to the process
  that made the call, ``notifications/cancelled`` to every process;
* **failure**: a tail whose writer died gets an error answer for each request still
  waiting on it (:meth:`writer_died`), so the client never waits forever.

Store calls that nobody waits for (detaching, ending) go to the store's background
queue (``SharedSessions.later``); when the store fails they are dropped, which costs
at most a relay that nobody reads.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.wire import (
    INTERNAL_ERROR,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    encode,
    encode_sse,
)

from ._guards import SERVER_ERROR, HttpError
from ._shared import (
    PROCESS_ID_SHIFT,
    Attached,
    Envelope,
    SessionRecord,
    SharedEvents,
    SharedSessions,
    StoreUnavailable,
    process_of,
    unavailable,
)
from ._sse_stream import Outbox

if TYPE_CHECKING:
    from ._sessions import HttpSessionChannel

__all__ = ["DIED", "SharedRouting", "Tail"]

logger = logging.getLogger("trimcp.http.server")

#: The error of a request whose process stopped while the client waited for it.
DIED: Final = "Internal error: the server process serving this request stopped"

CANCELLED: Final = "notifications/cancelled"
PROGRESS: Final = "notifications/progress"

#: The standalone stream's id (``_sessions.STANDALONE``).
STANDALONE: Final = "0"

#: Replicas made by this process: a part of their stream ids, so that a session's
#: replica made again here never reuses the stream ids of an earlier one.
_replicas = itertools.count(1)


@final
class Tail:
    """A stream held here and written elsewhere (module doc)."""

    __slots__ = ("buffered", "outbox", "producer", "request_ids", "seq", "token")

    def __init__(self) -> None:
        self.outbox: Outbox | None = None
        self.seq = 0
        self.producer: int | None = None
        self.request_ids: set[RequestId] = set()
        self.token = ""
        #: Events relayed before the attachment returned (queued after the replay).
        self.buffered: list[tuple[int, bytes]] | None = []

    def put(self, stream_id: str, seq: int, payload: bytes) -> None:
        if self.buffered is not None:
            self.buffered.append((seq, payload))
            return
        if seq <= self.seq or self.outbox is None:
            return
        self.seq = seq
        if self.request_ids:
            _answered(self.request_ids, payload)
        event_id = f"{stream_id}-{seq}"
        if not self.outbox.put(encode_sse(data=payload.decode(), id=event_id), event_id):
            self.outbox = None


def _answered(pending: set[RequestId], payload: bytes) -> None:
    """Drop the id that ``payload`` answers (a response or an error) from ``pending``."""
    if b'"result"' not in payload and b'"error"' not in payload:
        return
    try:
        value = json.loads(payload)
    except ValueError:
        return
    if isinstance(value, dict) and ("result" in value or "error" in value):
        pending.discard(value.get("id"))


@final
class SharedRouting:
    """The shared-store side of one session's channel (module doc)."""

    def __init__(self, session_id: str, sessions: SharedSessions, *, touch_every: float) -> None:
        self.session_id = session_id
        self.sessions = sessions
        self.events: SharedEvents = sessions.events(session_id)
        self.process = sessions.process
        #: Stream ids of this replica's requests: ``"<process>.<replica>.<n>"``, unique
        #: in the session across processes (the standalone stream is ``"0"``).
        self.stream_prefix = f"{self.process}.{next(_replicas)}."
        self.tails: dict[str, Tail] = {}
        #: Attachments of the request streams written here, by stream id.
        self.tokens: dict[str, str] = {}
        #: When the store last heard of this session's use: touches are spaced by
        #: ``touch_every`` seconds (a tenth of the idle timeout).
        self.touched = trio.current_time()
        self.touch_every = touch_every
        #: Called with the record's fields when another process changed them.
        self.on_update: Callable[[dict[str, str]], None] | None = None
        #: The record this replica was restored from (``None``: the session began
        #: here), for the MCP server to take its state from.
        self.restored: SessionRecord | None = None
        #: The session's outbound request ids start here: they name this process, so
        #: that an answer posted to any process finds its way back.
        self.first_request_id = self.process << PROCESS_ID_SHIFT

    def touch(self, *, force: bool = False) -> None:
        """The session was used here: its records live on (spaced, in the background)."""
        now = trio.current_time()
        if force or now - self.touched >= self.touch_every:
            self.touched = now
            self.sessions.later(partial(self.sessions.touch_session, self.session_id))

    # ------------------------------------------------------------ what the client sends
    async def route(self, message: Message) -> bool:
        """Relay ``message`` to where it belongs; ``True`` when it is not for here."""
        target: int | None = None
        if isinstance(message, Response | ErrorResponse):
            target = process_of(message.id)
        elif isinstance(message, Notification):
            if message.method == CANCELLED:
                await self.sessions.send(self._envelope(message), to=None)
                return False  # and here too: the request may run here
            if message.method == PROGRESS:
                target = process_of((message.params or {}).get("progressToken"))
        if target is None or target == self.process:
            return False
        await self.sessions.send(self._envelope(message), to=target)
        return True

    def _envelope(self, message: Message) -> Envelope:
        """A client message relayed from this process (``stream`` names it)."""
        return Envelope("msg", self.session_id, str(self.process), payload=encode(message))

    # ------------------------------------------------------------ the channel's streams
    async def send_standalone(self, channel: HttpSessionChannel, message: Message) -> None:
        """A message for the standalone stream: its log is written by every process
        and relayed to the one holding the client's GET."""
        data = encode(message)
        try:
            event_id = await self.events.publish(STANDALONE, data, last=False)
        except StoreUnavailable:
            event_id = ""
        if not event_id:  # never opened (or the store is down): nothing keeps it
            if isinstance(message, Request):
                raise trio.BrokenResourceError("no standalone SSE stream is open")
            channel.dropped += 1
            return
        outbox = channel._standalone
        if outbox is not None and not outbox.put(
            encode_sse(data=data.decode(), id=event_id), event_id
        ):
            channel._standalone = None

    async def prime(
        self,
        channel: HttpSessionChannel,
        stream_id: str,
        outbox: Outbox | None,
        retry: int,
    ) -> None:
        """Open ``stream_id`` in the shared log, held here, and queue its priming event
        on ``outbox``. The standalone stream is taken from whichever process held it
        before, and then follows what others write to it. While the store cannot be
        reached a request's stream goes on without a priming event (not resumable),
        and a GET gets 503."""
        tail = self.tail(STANDALONE) if stream_id == STANDALONE else None
        stream = channel._live.get(stream_id)  # its requests: failed elsewhere if we die
        request_ids = tuple(stream.pending) if stream is not None else ()
        try:
            opened = await self.events.opened(stream_id, request_ids)
        except StoreUnavailable:
            if tail is None:
                return
            self.close_tail(STANDALONE, tail)
            raise unavailable(self.sessions.retry_after) from None
        event_id = opened.event_id
        if outbox is not None:
            outbox.put(encode_sse(data=None, id=event_id, retry=retry), event_id)
        if tail is None:
            self.tokens[stream_id] = opened.token
            return
        tail.token = opened.token
        tail.seq = int(event_id.rpartition("-")[2])
        await self.taken_from(STANDALONE, opened.previous)
        if outbox is not None:
            outbox.stream_id = STANDALONE  # released by the channel when its GET ends
            self.attached(tail, STANDALONE, outbox)  # what others write, live

    async def publish(self, stream_id: str, data: bytes, *, last: bool) -> str | None:
        """Store an event of a stream written here (relayed to its holder if that is
        another process); its id, or ``None`` while the store cannot be reached (the
        live client still gets it, without an id to resume from)."""
        try:
            return await self.events.publish(stream_id, data, last=last) or None
        except StoreUnavailable:
            return None

    def stream_over(self, stream_id: str, *, stored: bool) -> None:
        """A stream written here ended; unless its last stored event said so (it was
        cancelled), the store is told, and whoever holds it ends it."""
        self.tokens.pop(stream_id, None)
        if not stored:
            self.sessions.later(partial(self.events.end, stream_id))

    async def resume(self, channel: HttpSessionChannel, last_event_id: str) -> Outbox | None:
        """``channel.resume`` in a shared store: the stream may be written anywhere."""
        stream_id = last_event_id.rpartition("-")[0]
        tail = self.tail(stream_id)  # what is relayed from now on waits for the replay
        try:
            attached = await self.events.attach(last_event_id)
        except StoreUnavailable:
            self.close_tail(stream_id, tail)
            raise unavailable(self.sessions.retry_after) from None
        if attached is None or attached.replay.gap:
            self.close_tail(stream_id, tail)
            if attached is not None:
                raise HttpError(
                    410,
                    "Gone: events after Last-Event-ID were evicted from the event store",
                    code=SERVER_ERROR,
                )
            return None
        outbox = channel.new_outbox()
        outbox.stream_id = stream_id
        for event_id, data in attached.replay.events:
            outbox.put(encode_sse(data=data.decode(), id=event_id), event_id)
        await self.taken_from(stream_id, attached.previous)
        stream = channel._live.get(stream_id)
        if stream is not None:  # written here: its own events come straight to it
            self.close_tail(stream_id, tail)
            if stream.outbox is not None:
                stream.outbox.close()
            stream.outbox = outbox
            self.tokens[stream_id] = attached.token
            return outbox
        if stream_id == STANDALONE:
            if channel._standalone is not None:
                channel._standalone.close()
            channel._standalone = outbox
            channel._standalone_opened = True
        self.attached(tail, stream_id, outbox, attached)
        return outbox

    # ------------------------------------------------------------ streams held here
    def tail(self, stream_id: str) -> Tail:
        """Start holding ``stream_id`` here; relayed events wait for :meth:`attached`."""
        old = self.tails.get(stream_id)
        if old is not None and old.outbox is not None:
            old.outbox.close()
        tail = self.tails[stream_id] = Tail()
        return tail

    def attached(
        self, tail: Tail, stream_id: str, outbox: Outbox, attached: Attached | None = None
    ) -> None:
        """The replay (if any) is in ``outbox``: queue what was relayed meanwhile and go
        live. Without ``attached``, ``outbox`` is a stream opened here just now."""
        if attached is not None:
            tail.producer = attached.producer
            tail.request_ids = set(attached.request_ids)
            for _, payload in attached.replay.events:
                _answered(tail.request_ids, payload)
            tail.seq = attached.last_seq
            tail.token = attached.token
        tail.outbox = outbox
        buffered, tail.buffered = tail.buffered or [], None
        for seq, payload in buffered:
            tail.put(stream_id, seq, payload)
        if attached is not None and not attached.live:
            self.close_tail(stream_id, tail)

    def relayed(self, envelope: Envelope) -> None:
        """An event (``ev``), the end (``end``) or a take-over (``take``) of a stream."""
        tail = self.tails.get(envelope.stream)
        if tail is None:
            return
        if envelope.kind == "ev":
            tail.put(envelope.stream, envelope.seq, envelope.payload)
        elif envelope.kind in ("end", "take"):
            self.close_tail(envelope.stream, tail)

    def close_tail(self, stream_id: str, tail: Tail | None = None) -> None:
        tail = tail or self.tails.get(stream_id)
        if tail is None:
            return
        if self.tails.get(stream_id) is tail:
            del self.tails[stream_id]
        if tail.outbox is not None:
            tail.outbox.close()
            tail.outbox = None

    def released(self, stream_id: str, outbox: Outbox) -> None:
        """The response draining ``outbox`` ended: its attachment is over."""
        tail = self.tails.get(stream_id)
        token = None
        if tail is not None and tail.outbox is outbox:
            del self.tails[stream_id]
            token = tail.token
        elif stream_id in self.tokens:
            token = self.tokens.pop(stream_id)
        if token:
            self.sessions.later(partial(self.events.detach, stream_id, token))

    async def taken_from(self, stream_id: str, previous: int | None) -> None:
        """Tell the process that held ``stream_id`` until now to let its client go."""
        if previous is not None and previous != self.process:
            envelope = Envelope("take", self.session_id, stream_id)
            with contextlib.suppress(StoreUnavailable):
                await self.sessions.send(envelope, to=previous)

    def producers(self) -> set[int]:
        """The other processes writing streams held here."""
        return {
            t.producer
            for t in self.tails.values()
            if t.producer is not None and t.producer != self.process
        }

    async def writer_died(self, process: int) -> None:
        """``process`` stopped: answer each request still waiting on a stream it
        wrote, held here, with an error, and end those streams."""
        for stream_id, tail in list(self.tails.items()):
            if tail.producer != process:
                continue
            error = ErrorObject(code=INTERNAL_ERROR, message=DIED)
            for request_id in sorted(tail.request_ids, key=str):
                data = encode(ErrorResponse(id=request_id, error=error))
                event_id = await self.events.publish(stream_id, data, last=False)
                tail.put(stream_id, int(event_id.rpartition("-")[2]), data)
            tail.request_ids.clear()
            self.sessions.later(partial(self.events.end, stream_id))
            self.close_tail(stream_id, tail)

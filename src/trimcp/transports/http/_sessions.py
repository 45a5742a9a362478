"""One Streamable HTTP session as a :class:`~trimcp.nursery.MessageChannel`.

Theory of operation
-------------------
POSTs feed decoded messages into a bounded inbound queue (:meth:`HttpSessionChannel.
deliver`); the session reads them with :meth:`receive`. Every message the session
sends goes on exactly one stream, chosen by :meth:`send`:

* a response goes to the stream of the POST that carried its request (by id);
* a message ``related`` to an inbound request goes to that request's stream;
* ``notifications/cancelled`` for a request the server made on a request's stream goes
  on that same stream;
* anything else goes to the standalone GET stream, or is dropped (and counted) when the
  session never opened one.

A request stream ends once every request it carried is answered or cancelled by the
client, and every request the server made on it (sampling, elicitation, roots) is
answered or cancelled in turn. So when the client cancels a call whose handler waits
on a reverse call, the stream stays open for the ``notifications/cancelled`` of that
reverse call, which reaches the client before the stream closes (design invariant 4).

A request stream starts undecided. If the first message routed to it is its own
response, the POST is answered with one JSON body; otherwise it becomes an SSE stream
whose first event is a *priming event* (an id, empty data and ``retry``). Events of SSE
streams are written to the session's :class:`EventStore` before they are queued on the
stream's :class:`Outbox`, so when the client goes away, or the server closes the stream
on purpose (:meth:`close_request_stream`, SSE polling), the rest of the stream,
response included, waits in the store. A ``GET`` with ``Last-Event-ID`` replays it and
re-attaches the live stream (:meth:`resume`). A disconnect never cancels the request
(handshake era).

Sending never waits on the network: outboxes are bounded and an overflowing one is
closed, so a stalled client stalls nothing but its own stream. Every outbox of the
session also draws on the session's output budget (:class:`~._budget.ByteBudget`,
inside the server's): an SSE event that does not fit closes its stream like an
overflow (the event stays in the store), and a JSON answer that does not fit is
replaced by a ``-32000`` error for its request, so output held for slow clients never
grows past the budgets.

A session of a shared store (N processes) has a :class:`~._shared_channel.SharedRouting`
for what involves the other processes (:mod:`._shared_channel`); without one, nothing does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import final

import trio

from trimcp.nursery import Caller
from trimcp.wire import (
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    encode,
    encode_sse,
)

from ._budget import ByteBudget
from ._eager import EagerLot
from ._event_store import EventStore
from ._guards import SERVER_ERROR, Headers, HttpError
from ._handshake import note_initialized
from ._json_answers import JsonAnswers
from ._modern_post import param_headers
from ._request_stream import RequestStream
from ._server_limits import HttpServerLimits
from ._shared_channel import SharedRouting
from ._sse_stream import Outbox

__all__ = ["STANDALONE", "HttpSessionChannel", "RequestStream"]

logger = logging.getLogger("trimcp.http.server")

#: Stream id of the standalone (GET) stream; request streams count up from 1.
STANDALONE = "0"


@final
class HttpSessionChannel(JsonAnswers):
    """The channel of one HTTP session; see the module doc.

    Args:
      session_id: the ``Mcp-Session-Id`` (``None`` in stateless mode).
      limits: queue bounds and the SSE ``retry`` value.
      store: where SSE events are kept for resumption (``None``: not resumable).
      output: the session's output budget (``None``: only the per-stream bounds).
      shared: its part in a shared store, whose log replaces ``store`` (or ``None``).
    """

    def __init__(
        self,
        session_id: str | None,
        limits: HttpServerLimits,
        store: EventStore | None,
        output: ByteBudget | None = None,
        shared: SharedRouting | None = None,
    ) -> None:
        self.session_id = session_id
        self.limits = limits
        self.output = output
        self.shared = shared
        self.store = store if shared is None else shared.events
        #: The revision the session negotiated (set by the lifecycle).
        self.protocol_version: str | None = None
        #: Messages that had no stream to go to (counted, never kept).
        self.dropped = 0
        #: HTTP requests and streams using this session right now.
        self.busy = 0
        #: The run's clock (one Python call per reading instead of two).
        self._now = trio.lowlevel.current_clock().current_time
        self.last_active = self._now()
        self.on_close: Callable[[], None] | None = None
        #: Called once ``notifications/initialized`` was delivered (the handshake is done).
        self.on_initialized: Callable[[], None] | None = None
        #: The session's inbound queue (``inbound_queue`` messages): what POSTs deliver.
        self.inbound_send, self._inbound = trio.open_memory_channel[Message](limits.inbound_queue)
        self._by_request: dict[RequestId, RequestStream] = {}
        #: The stream each outstanding reverse call (a request the server made on a
        #: request's stream) went out on.
        self._reverse: dict[RequestId, RequestStream] = {}
        self._live: dict[str, RequestStream] = {}
        self._next_stream = 1
        #: The standalone stream's outbox while a GET holds it; ``opened`` once one did.
        self._standalone: Outbox | None = None
        self._standalone_opened = False
        #: Ids of requests the transport itself made whose responses are swallowed.
        self._swallow: dict[RequestId, trio.Event] = {}
        self._initialize_ids: set[RequestId] = set()
        self._closed = False
        #: A stateless-era POST's channel (2026-07-28): its one request carries its own
        #: version and capabilities; the server serves it without a handshake.
        self.stateless_era = False
        #: Who borrowed this pooled channel now: a fresh object per stateless-era POST
        #: (``None`` otherwise), so that what is kept per caller (rate-limit buckets)
        #: is never shared by the unrelated callers one session serves in turn.
        self.lease: object | None = None
        #: Requests the session knows by an id of the server's choosing, to the id their
        #: client gave them, which their answers carry (a reused stateless-era session,
        #: see :meth:`~._sessions_manager.SessionManager.take_stateless`).
        self.wire_ids: dict[RequestId, RequestId] = {}
        #: Whether the MCP session served over this channel still runs work of its own
        #: (detached tasks): set by the server when it opens one (:meth:`holds_work`).
        self.session_busy: Callable[[], bool] | None = None
        #: The identity of the caller that created the session (with authorization):
        #: only that caller can use its id.
        self.owner: str | None = None
        #: Where its responses wait their eager rounds (``None``: they poll).
        self.eager: EagerLot | None = None

    # ------------------------------------------------------------ MessageChannel
    @property
    def closed(self) -> bool:
        return self._closed

    async def receive(self) -> Message:
        return await self._inbound.receive()

    def receive_nowait(self) -> Message:
        """The next message already delivered; :class:`trio.WouldBlock` if none is."""
        return self._inbound.receive_nowait()

    async def aclose(self) -> None:
        self.close()

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        """Route ``message`` to its one stream (module doc). Never waits on the network,
        but is a checkpoint: a sender looping on it lets the responses writing its
        stream (and every other task) run, instead of filling the stream's queue
        before a byte of it is written.

        Raises :class:`trio.ClosedResourceError` once the session is closed, and
        :class:`trio.BrokenResourceError` for a request with no stream that could carry
        it, so that a reverse call fails at once instead of waiting for its timeout.
        """
        await trio.lowlevel.checkpoint()
        if self._closed:
            raise trio.ClosedResourceError("the HTTP session is closed")
        if isinstance(message, Response | ErrorResponse) and message.id is not None:
            if message.id in self._swallow:
                self._swallow.pop(message.id).set()
                return
            stream = self._by_request.get(message.id)
            if stream is None:
                self._drop(message, "no stream carries a request with this id")
                return
            await self._emit(stream, message, response_id=message.id)
            return
        reverse_id = self._cancelled_reverse_call(message)
        if reverse_id is not None:  # even once its request was cancelled
            await self._emit(self._reverse[reverse_id], message, response_id=None)
            self._settle(reverse_id)
            return
        if related is None:
            await self._send_standalone(message)
            return
        stream = self._by_request.get(related)
        if stream is None:  # its request is over: never moved to another stream
            if isinstance(message, Request):
                raise trio.BrokenResourceError("the related request has ended")
            self._drop(message, "its request has ended")
            return
        if isinstance(message, Request):
            if stream.outbox is None and stream.mode != "sse":
                raise trio.BrokenResourceError("the client left before this request")
            stream.add_reverse(message.id)
            self._reverse[message.id] = stream
        await self._emit(stream, message, response_id=None)

    def _cancelled_reverse_call(self, message: Message) -> RequestId | None:
        """The reverse call ``message`` cancels, if it is one that went on a stream."""
        if not isinstance(message, Notification) or message.method != "notifications/cancelled":
            return None
        request_id = (message.params or {}).get("requestId")
        if isinstance(request_id, str | int) and request_id in self._reverse:
            return request_id
        return None

    def _settle(self, reverse_id: RequestId) -> None:
        """A reverse call was answered or cancelled: end its stream if that was the last
        thing it waited for."""
        stream = self._reverse.pop(reverse_id, None)
        if stream is None:
            return
        stream.end_reverse(reverse_id)
        if stream.over and self._live.get(stream.stream_id) is stream:
            self._end_stream(stream)

    # ------------------------------------------------------------ routing
    def _drop(self, message: Message, why: str) -> None:
        self.dropped += 1
        if self.dropped <= self.limits.max_dropped:
            logger.debug(
                "session %s: dropped a %s: %s", self.session_id, type(message).__name__, why
            )

    async def _send_standalone(self, message: Message) -> None:
        if self.shared is not None:
            await self.shared.send_standalone(self, message)
            return
        if not self._standalone_opened:
            if isinstance(message, Request):
                raise trio.BrokenResourceError("no standalone SSE stream is open")
            self._drop(message, "no standalone SSE stream")
            return
        data = encode(message)
        event_id = await self._store(STANDALONE, data)
        outbox = self._standalone
        if outbox is None or not outbox.put(encode_sse(data=data.decode(), id=event_id), event_id):
            self._standalone = None
            if isinstance(message, Request) and self.store is None:
                raise trio.BrokenResourceError("the standalone SSE stream is closed")
            self._drop(message, "the standalone SSE stream is not connected")

    async def _store(self, stream_id: str, data: bytes, *, last: bool = False) -> str | None:
        if self.shared is not None:  # ``last``: the shared log learns the stream is over
            return await self.shared.publish(stream_id, data, last=last)
        if self.store is None:
            return None
        return await self.store.store(stream_id, data)

    async def _emit(
        self, stream: RequestStream, message: Message, *, response_id: RequestId | None
    ) -> None:
        data = self._encode_answer(stream, message, response_id)
        if stream.mode == "pending":
            if response_id is not None and (not stream.batch or stream.done):
                self._answer_json(stream, data)
                return
            if response_id is not None:
                stream.collected.append(data)
                return
            await self._start_sse(stream)
        await self._put_event(stream, data)
        if stream.over:
            self._end_stream(stream, stored=True)
            self._forget_wire_ids(stream)

    async def _start_sse(self, stream: RequestStream, retry_ms: int | None = None) -> None:
        stream.mode = "sse"
        await self._prime(stream.stream_id, stream.outbox, retry_ms)
        held, stream.collected = stream.collected, []
        for data in held:  # batch responses that came before the first other message
            await self._put_event(stream, data)

    async def _prime(self, stream_id: str, outbox: Outbox | None, retry_ms: int | None) -> None:
        retry = self.limits.sse_retry_ms if retry_ms is None else retry_ms
        if self.shared is not None:
            await self.shared.prime(self, stream_id, outbox, retry)
            return
        if self.store is None:
            return
        event_id = await self.store.store(stream_id, None)
        if outbox is not None:
            outbox.put(encode_sse(data=None, id=event_id, retry=retry), event_id)

    async def _put_event(self, stream: RequestStream, data: bytes) -> None:
        event_id = await self._store(stream.stream_id, data, last=stream.over)
        outbox = stream.outbox
        if outbox is not None and not outbox.put(
            encode_sse(data=data.decode(), id=event_id), event_id
        ):
            logger.debug("session %s: stream %s closed", self.session_id, stream.stream_id)
            stream.outbox = None

    def _end_stream(self, stream: RequestStream, *, stored: bool = False) -> None:
        """``stream`` is over (``stored``: its last event, in the shared log, said so)."""
        if self.shared is not None and stream.mode == "sse":
            self.shared.stream_over(stream.stream_id, stored=stored)
        self._live.pop(stream.stream_id, None)
        if stream.outbox is not None:
            stream.outbox.close()
            stream.outbox = None

    # ------------------------------------------------------------ the transport's side
    def new_outbox(self) -> Outbox:
        return Outbox(
            max_events=self.limits.stream_queue_events,
            max_bytes=self.limits.stream_queue_bytes,
            budget=self.output,
        )

    def request_headers(self, request_id: RequestId) -> Headers | None:
        """The headers of the POST that carried request ``request_id`` while it runs."""
        stream = self._by_request.get(request_id)
        return None if stream is None else stream.headers

    def param_headers(self, request_id: RequestId) -> dict[str, list[str]] | None:
        """The ``Mcp-Param-*`` headers of the POST that carried request ``request_id``
        (by lower-case parameter name), for the engine to check against its arguments;
        ``None`` once it is not running. Read only for the requests that need them."""
        headers = self.request_headers(request_id)
        return None if headers is None else param_headers(headers)

    def in_flight(self, request_id: RequestId) -> bool:
        return request_id in self._by_request or request_id in self._swallow

    def open_request_stream(
        self,
        requests: list[Request],
        *,
        batch: bool,
        caller: Caller | None = None,
        headers: Headers | None = None,
    ) -> Outbox:
        """Register the stream of a POST carrying ``requests`` (sent by ``caller``, with
        its ``headers``); return its outbox.

        The caller has checked that none of the ids is in flight (:meth:`in_flight`).
        """
        request_ids = [r.id for r in requests]
        for request in requests:  # a loop, not a generator: no call per request
            if request.method == "initialize":
                self._initialize_ids.add(request.id)
        prefix = "" if self.shared is None else self.shared.stream_prefix
        stream = RequestStream(f"{prefix}{self._next_stream}", request_ids, batch, caller, headers)
        self._next_stream += 1
        outbox = stream.outbox = self.new_outbox()
        outbox.stream_id = stream.stream_id
        for request_id in request_ids:
            self._by_request[request_id] = stream
        self._live[stream.stream_id] = stream
        return outbox

    def answer_status(
        self, request_id: RequestId, status: int, headers: Sequence[tuple[str, str]] = ()
    ) -> bool:
        """Send the answer to ``request_id`` with HTTP ``status`` and ``headers``.

        For middleware that answers a request itself with an error HTTP has a status
        for (429 with ``Retry-After`` for a rate limit). It applies when the answer is
        its POST's whole JSON body; ``False`` when it cannot (the POST's response is
        already a stream, or it carries a batch), and the answer goes out as usual.
        """
        stream = self._by_request.get(request_id)
        if stream is None or stream.batch or stream.mode != "pending" or stream.outbox is None:
            return False
        encoded = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        stream.outbox.reply_status = (status, encoded)
        return True

    def caller_for(self, request_id: RequestId) -> Caller | None:
        """Who sent the request ``request_id`` still in flight (``None``: nobody known)."""
        stream = self._by_request.get(request_id)
        return stream.caller if stream is not None else None

    def cancelled(self, request_id: object) -> None:
        """The client cancelled ``request_id``: no response will come, end its stream.

        A response already on its way is then dropped, which is what the client asked
        for. ``initialize`` cannot be cancelled, so its stream is left alone.
        """
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        stream = self._by_request.get(request_id)
        if stream is None or request_id in self._initialize_ids:
            return
        del self._by_request[request_id]
        stream.pending.discard(request_id)
        if stream.over:
            if stream.mode == "pending" and stream.collected:
                self._finish_json(stream)
            else:
                self._end_stream(stream)

    def detach(self, outbox: Outbox) -> None:
        """The response that drained ``outbox`` is over (client gone or stream done):
        what it still held is dropped and its bytes go back to the budget."""
        outbox.abort()
        stream = None if outbox.stream_id is None else self._live.get(outbox.stream_id)
        if stream is not None and stream.outbox is outbox:
            stream.outbox = None
        if self._standalone is outbox:
            self._standalone = None
        if self.shared is not None and outbox.stream_id is not None:
            self.shared.released(outbox.stream_id, outbox)

    async def close_request_stream(self, request_id: RequestId, *, retry_ms: int | None) -> bool:
        """End the SSE response of ``request_id`` now; its request keeps running.

        The rest of its output is kept in the event store, and the client resumes it
        with ``GET`` + ``Last-Event-ID`` after ``retry_ms`` (default: the limits'
        ``sse_retry_ms``). Returns ``False`` when there is nothing to close (unknown
        request, already answered, or no event store to resume from).
        """
        stream = self._by_request.get(request_id)
        if stream is None or self.store is None:
            return False
        if stream.mode == "pending":
            await self._start_sse(stream, retry_ms)
        elif retry_ms is not None and stream.outbox is not None:
            stream.outbox.put(encode_sse(data=None, retry=retry_ms))
        if stream.outbox is not None:
            stream.outbox.close()
            stream.outbox = None
        return True

    def open_standalone(self) -> Outbox | None:
        """The outbox of a new standalone GET stream, or ``None`` if one is open (409)."""
        if self._standalone is not None and not self._standalone.closed:
            return None
        self._standalone = self.new_outbox()
        self._standalone_opened = True
        return self._standalone

    async def prime_standalone(self, outbox: Outbox) -> None:
        await self._prime(STANDALONE, outbox, None)

    async def resume(self, last_event_id: str) -> Outbox | None:
        """Re-open the stream ``last_event_id`` belongs to; ``None`` if it is unknown.

        The returned outbox holds the stored events after that id and then, if the
        stream is still live, whatever it sends next. Raises :class:`HttpError` 410 when
        the store no longer has every event after that id (a bound evicted some).
        """
        if self.store is None:
            return None
        if self.shared is not None:
            return await self.shared.resume(self, last_event_id)
        replay = await self.store.replay_after(last_event_id)
        if replay is None:
            return None
        if replay.gap:
            raise HttpError(
                410,
                "Gone: events after Last-Event-ID were evicted from the event store",
                code=SERVER_ERROR,
            )
        outbox = self.new_outbox()
        for event_id, data in replay.events:
            outbox.put(encode_sse(data=data.decode(), id=event_id), event_id)
        if replay.stream_id == STANDALONE:
            if self._standalone is not None:
                self._standalone.close()
            self._standalone = outbox
            self._standalone_opened = True
            return outbox
        stream = self._live.get(replay.stream_id)
        if stream is None:
            outbox.close()  # the stream is complete: replay only
        else:
            if stream.outbox is not None:
                stream.outbox.close()
            stream.outbox = outbox
            outbox.stream_id = stream.stream_id
        return outbox

    async def deliver(self, message: Message) -> None:
        """Queue one inbound message for the session (waits while the queue is full);
        ``notifications/initialized`` calls :attr:`on_initialized`."""
        await self.inbound_send.send(message)
        self.delivered(message)

    def deliver_nowait(self, message: Message) -> None:
        """:meth:`deliver` if the queue has room now; :class:`trio.WouldBlock` if not."""
        self.inbound_send.send_nowait(message)
        self.delivered(message)

    def delivered(self, message: Message) -> None:
        """``message`` was queued (by :meth:`deliver`, or on :attr:`inbound_send`)."""
        if self.on_initialized is not None:
            note_initialized(self, message)
        if isinstance(message, Response | ErrorResponse) and message.id is not None:
            self._settle(message.id)  # the client answered a reverse call

    async def deliver_internal(self, request: Request) -> trio.Event:
        """Deliver a request whose response the transport swallows; set when answered."""
        answered = trio.Event()
        self._swallow[request.id] = answered
        await self.inbound_send.send(request)
        return answered

    @property
    def idle(self) -> bool:
        """Open, with no POST being served, no stream, no reverse call, nothing swallowed,
        and no work its session detached (that work ends with the POST's session, as it
        did when every stateless-era POST had a session of its own)."""
        return not (
            self._closed
            or self.busy
            or self._by_request
            or self._live
            or self._reverse
            or self._swallow
            or self._standalone_opened
            or (self.session_busy is not None and self.session_busy())
        )

    def reuse(self) -> None:
        """Forget what the last POST of an :attr:`idle` stateless-era channel left."""
        self.wire_ids.clear()
        self.lease = None
        self._initialize_ids.clear()

    def touch(self) -> None:
        self.last_active = self._now()
        if self.shared is not None:
            self.shared.touch()

    def close(self) -> None:
        """End the session: no more input, every open response ends."""
        if self._closed:
            return
        self._closed = True
        self.inbound_send.close()
        for stream in self._live.values():
            if stream.outbox is not None:
                stream.outbox.close()
                stream.outbox = None
        self._live.clear()
        self._by_request.clear()
        self._reverse.clear()
        if self._standalone is not None:
            self._standalone.close()
            self._standalone = None
        for event in self._swallow.values():
            event.set()
        self._swallow.clear()
        if self.store is not None:
            self.store.close()
        if self.on_close is not None:
            self.on_close()

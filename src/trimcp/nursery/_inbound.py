"""Inbound requests of a session: judged, admitted, run in their own scope, answered.

Part of :class:`~trimcp.nursery.Session` (its module doc tells the whole story); this
mixin holds the request side so that each file stays one concern.

* **Judged** by the reader, in arrival order: a duplicate in-flight id and an unknown
  method are refused at once, then the lifecycle table says whether the session's
  phase accepts the request (:mod:`._lifecycle`). An ``initialize`` is a barrier: the
  reader reads nothing more until it has been answered.
* **Admitted** through a queue of ``max_queued`` entries to ``max_in_flight`` slots, in
  arrival order; a request cancelled while it waited is dropped there, unstarted.
* **Run** in a fresh cancel scope, the handler context's lifetime.
* **Answered** while still holding the slot: the slot is freed only once the answer was
  written, so answers waiting for a peer that does not read are bounded by the same
  ``max_in_flight``, and the reader stops (backpressure) instead of piling them up.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final, final

import trio

from trimcp.binding import structure, unstructure
from trimcp.dispatch import McpError, RequestRoute, Slots, error_for_exception
from trimcp.wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ErrorObject,
    ErrorResponse,
    Message,
    Request,
    RequestId,
    Response,
    is_request_id,
    make_response,
)

from ._context import HandlerContext
from ._lifecycle import REFUSALS, REQUEST_EVENTS, Action, Event, LifecycleError

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.dispatch import Registry, Terminal

    from ._lifecycle import Lifecycle
    from ._limits import SessionLimits
    from ._observer import RequestObserver

__all__ = ["InFlight", "InboundRequests"]

logger = logging.getLogger("trimcp.session")

#: What a handler cut short by ``handler_timeout`` "returned".
_TIMED_OUT: Final = object()


@final
class InFlight:
    """The table entry of one inbound request."""

    __slots__ = ("answered", "cancellable", "cause", "ctx", "peer_cancelled", "scope")

    def __init__(self, scope: trio.CancelScope, cancellable: bool, barrier: bool) -> None:
        self.scope = scope
        self.cancellable = cancellable
        self.ctx: HandlerContext | None = None
        #: Set when the request was cancelled on purpose (peer, session end): no response.
        #: Every cancellation of a request still queued sets it first, so the admitter
        #: asks it instead of ``scope.cancel_called`` (a property that reads the clock).
        self.peer_cancelled = False
        #: Who cancelled it first: ``"peer"`` or ``"session_ended"`` (``None``: nobody).
        self.cause: str | None = None
        #: A barrier's (``initialize``): set once it ended and its answer was written.
        self.answered: trio.Event | None = trio.Event() if barrier else None


class InboundRequests:
    """The inbound-request half of :class:`~trimcp.nursery.Session` (a mixin)."""

    # Provided by Session.
    registry: Registry
    observer: RequestObserver | None
    limits: SessionLimits
    lifecycle: Lifecycle
    _nursery: trio.Nursery
    _send_chain: Terminal
    #: The channel's ``send_nowait`` when nothing stands between it and the session.
    _send_nowait: Callable[[Message], object] | None
    _in_flight: dict[RequestId, InFlight]
    #: The ``max_in_flight`` slots, the admitter waiting for one while none is free.
    _in_flight_slots: Slots
    _running: int
    _answering: int
    _admission_send: trio.MemorySendChannel[tuple[Request, RequestRoute, InFlight]]
    _admission_receive: trio.MemoryReceiveChannel[tuple[Request, RequestRoute, InFlight]]
    #: Set once nothing is in flight, queued or being answered, while the input has ended.
    _drained: trio.Event | None

    async def _accept_request(self, request: Request) -> None:
        if request.id in self._in_flight:
            await self._refuse(
                request,
                INVALID_REQUEST,
                "Invalid Request: a request with this id is already in flight",
            )
            return
        route = self.registry.route(request.method)
        if route is None:
            await self._refuse(request, METHOD_NOT_FOUND, f"Method not found: {request.method}")
            return
        try:
            event = REQUEST_EVENTS.get(request.method, Event.REQUEST)  # (request_event)
            action = self.lifecycle.handle(event, request)
        except LifecycleError as exc:
            await self._refuse(request, exc.code, exc.message)
            return
        # (identity, not a set of members: an Enum hashes in Python)
        if action is not Action.ACCEPT and action is not Action.BARRIER:
            code, message = REFUSALS[action]
            await self._refuse(request, code, message)
            return
        entry = InFlight(trio.CancelScope(), route.cancellable, action is Action.BARRIER)
        self._in_flight[request.id] = entry
        # Blocks only when max_queued requests already wait for a slot: that is where
        # backpressure stops the reader. Answers and notifications never wait here, so
        # handlers at the in-flight cap still get the answers to their reverse calls.
        # The hand-over takes no checkpoint while the queue has room (the reader had
        # one when it received): a yield per request would cost a scheduler batch each.
        try:
            self._admission_send.send_nowait((request, route, entry))
        except trio.WouldBlock:
            await self._admission_send.send((request, route, entry))
        if entry.answered is not None:
            await entry.answered.wait()  # the barrier: nothing is read before it ends

    async def _refuse(self, request: Request, code: int, message: str) -> None:
        error = ErrorObject(code=code, message=message)
        await self._reply(ErrorResponse(id=request.id, error=error), related=request.id)

    async def _admit(self) -> None:
        """Start queued requests, in arrival order, as in-flight slots free up.

        After each receive (a checkpoint) it starts everything already queued while
        slots are free, without a checkpoint per request. A request cancelled while it
        waited (by the peer, or the session's end) is dropped without starting.
        """
        queue = self._admission_receive
        async for item in queue:
            while True:
                entry = item[2]
                started = False
                if not entry.peer_cancelled:
                    slots = self._in_flight_slots
                    if slots.free:  # (take_nowait inline: every request passes here)
                        slots.free -= 1
                        started = True
                    else:
                        await slots.wait()  # woken holding a freed slot
                        # Cancelled while it waited for the slot: the slot goes back.
                        started = not entry.peer_cancelled
                        if not started:
                            slots.release()
                    if started:
                        self._running += 1
                        self._nursery.start_soon(self._run_request, *item)
                if not started:
                    if entry.answered is not None:
                        self.lifecycle.handle(Event.INITIALIZE_FAILED)
                    self._forget(item[0].id, entry)
                try:
                    item = queue.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break

    def _forget(self, request_id: RequestId, entry: InFlight) -> None:
        """Remove a request that ended; release a barrier waiting on it."""
        del self._in_flight[request_id]
        if entry.answered is not None:
            entry.answered.set()
        if self._drained is not None:
            self._idle_check()

    async def _run_request(  # noqa: C901 - one flat frame per request (see below)
        self, request: Request, route: RequestRoute, entry: InFlight
    ) -> None:
        reply: Message | None = None
        params = request.params
        meta = params.get("_meta") if params else None
        ctx = HandlerContext(
            self,  # type: ignore[arg-type]  # a mixin of Session
            request.id,
            request.method,
            params,
            meta if type(meta) is dict else {},
            entry.scope,
        )
        entry.ctx = ctx
        watch = None
        # One frame for the whole request (no helper coroutine): a parked request's
        # frames are most of what it costs, and each is unwound again on cancellation.
        try:
            try:
                if self.observer is not None:
                    watch = self.observer.inbound(ctx)
                with entry.scope:
                    try:
                        if params and "_meta" in params:
                            _check_meta(meta)
                        if route.params_type is not None:
                            ctx.params = structure(params or {}, route.params_type)
                        if self.limits.handler_timeout is None:
                            result = await route.handler(ctx, ctx.params)
                        else:
                            with trio.move_on_after(self.limits.handler_timeout) as deadline:
                                result = await route.handler(ctx, ctx.params)
                            if deadline.cancelled_caught:
                                result = _TIMED_OUT
                    except Exception:
                        if ctx.log_route is not None:
                            await ctx.log_route.finish()  # the error answer follows that output
                        raise
                    if ctx.log_route is not None and result is not _TIMED_OUT:
                        await ctx.log_route.finish()
                    reply = _answer(request.id, result)
            except Exception as exc:
                if not entry.peer_cancelled:
                    error = error_for_exception(exc, method=request.method, request_id=request.id)
                    reply = ErrorResponse(id=request.id, error=error)
            finally:
                ctx._close()
                self._running -= 1
                # A scope cancelled by the handler itself means "no response" too, even
                # when it returned (or raised) before a checkpoint delivered it.
                if entry.peer_cancelled or entry.scope.cancel_called:
                    reply = None
                if watch is not None:
                    watch.finished(reply)
            if entry.answered is not None:
                # initialize's outcome moves the phase before its answer goes out, so
                # the peer that reads the answer finds the session initialized.
                ok = isinstance(reply, Response)
                self.lifecycle.handle(Event.INITIALIZE_ANSWERED if ok else Event.INITIALIZE_FAILED)
            if reply is not None:
                # The slot is still held while the answer is written (see the module doc).
                self._answering += 1  # a graceful shutdown waits for answers on their way
                try:
                    # _reply in this frame: every request answers, a coroutine less each.
                    sending = self._put_or_chain(reply, request.id)
                    if sending is not None:
                        await sending
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    logger.debug("peer gone before the answer to %r could be sent", request.id)
                finally:
                    self._answering -= 1
        finally:
            self._in_flight_slots.release()
            self._forget(request.id, entry)

    async def _reply(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send an answer; a peer already gone is no error (nobody is left to tell)."""
        try:
            sending = self._put_or_chain(message, related)
            if sending is not None:
                await sending
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            logger.debug("peer gone before the answer to %r could be sent", related)

    def _put_or_chain(self, message: Message, related: RequestId | None) -> Awaitable[None] | None:
        """Put ``message`` on the channel at once if it takes it so (a memory pair with
        room: ``None``), else hand back the send to await."""
        put = self._send_nowait
        if put is not None:
            try:
                put(message)
                return None
            except trio.WouldBlock:
                pass
        return self._send_chain(message, related)

    def _idle_check(self) -> None:
        """Set ``_drained`` once nothing is in flight, queued or being answered."""
        if not self._in_flight and self._answering == 0 and self._drained is not None:
            self._drained.set()

    def _cancel_inbound(self, request_id: object) -> None:
        if not is_request_id(request_id):
            return
        entry = self._in_flight.get(request_id)
        if entry is None or not entry.cancellable:
            return  # unknown, finished or initialize: ignored, as the spec allows
        entry.peer_cancelled = True
        entry.cause = entry.cause or "peer"
        entry.scope.cancel()

    def cancelled_by(self, request_id: RequestId) -> str | None:
        """Who cancelled inbound request ``request_id`` first, while it runs: ``"peer"``
        (``notifications/cancelled``), ``"session_ended"``, or ``None``."""
        entry = self._in_flight.get(request_id)
        return entry.cause if entry is not None else None


def _answer(request_id: RequestId, result: Any) -> Message:
    """The answer to a request whose handler returned ``result``."""
    if result is _TIMED_OUT:
        error = ErrorObject(code=REQUEST_TIMEOUT, message="Request timed out")
        return ErrorResponse(id=request_id, error=error)
    if type(result) is not dict:
        result = {} if result is None else unstructure(result)
    return make_response(request_id, result)


def _check_meta(meta: object) -> None:
    """Refuse a request ``_meta`` the schema rules out (every revision): not an object,
    or a ``progressToken`` that is neither a string nor an integer. Raises
    :class:`McpError` (``-32602``), the request's answer; a request is never run with a
    token it could not be sent progress for."""
    if type(meta) is not dict:
        raise McpError(INVALID_PARAMS, "Invalid params: _meta must be an object")
    if "progressToken" in meta and not is_request_id(meta["progressToken"]):
        raise McpError(
            INVALID_PARAMS, "Invalid params: _meta.progressToken must be a string or an integer"
        )

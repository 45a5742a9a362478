"""The session: one nursery, one reader, one cancel scope per request in flight.

Theory of operation
-------------------
:func:`open_session` opens a nursery and starts the *reader*, the only task that reads
the transport. Everything the session does happens in that nursery:

* **Inbound requests.** For each request the reader takes a slot of the in-flight
  limiter (``max_in_flight``; when none is free the reader blocks, which stops reading:
  backpressure) and starts a child task. The child enters a fresh
  :class:`trio.CancelScope` and builds the :class:`HandlerContext` around it, so the
  scope is the context's lifetime. ``notifications/cancelled``, the handler deadline, the
  peer going away and the session closing all cancel exactly that scope; a request whose
  scope was cancelled gets no response. Otherwise its outcome (result, or the one error
  :func:`~trimcp.dispatch.error_for_exception` makes of an exception) goes back with its
  id. In every path the in-flight entry is removed and the context closed.
* **Outbound requests** take an id and a waiter from the :class:`PendingTable` and wait
  in the caller's task under a timeout scope whose deadline progress pushes back (up to
  a hard maximum). When the caller stops waiting (timeout or its own cancellation) and
  the request was written, ``notifications/cancelled`` goes out under a shielded,
  time-bounded scope before the caller's scope exits. Reverse calls made by handlers are
  just outbound requests made from a handler's task, so cancellation flows down the
  tree by itself.
* **Inbound answers** resolve their waiter; an answer nobody waits for is dropped and
  counted.
* **The end.** When the transport ends, every pending outbound call fails at once with
  :class:`~trimcp.dispatch.ConnectionClosedError`, every handler scope and every
  detached task is cancelled, and :meth:`Session.wait_closed` returns. Leaving the
  ``open_session`` block cancels the nursery, so no task outlives the session.

Messages pass the role's *recv* middleware stack on the way in and its *send* stack on
the way out; both are composed when the session starts and again whenever one of them
changes. An ``observer`` sees requests start and end.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Unpack, final

import trio

from trimcp.binding import structure, unstructure
from trimcp.dispatch import (
    ConnectionClosedError,
    McpError,
    Middleware,
    Middlewares,
    PendingCall,
    PendingTable,
    ProgressCallback,
    Registry,
    RequestRoute,
    RequestTimeoutError,
    error_for_exception,
)
from trimcp.wire import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)

from ._channel import MessageChannel
from ._context import BackgroundContext, HandlerContext
from ._limits import SessionLimits
from ._observer import RequestObserver, RequestOptions
from ._state import Role, SessionState

__all__ = ["InFlight", "Session"]

#: What a handler cut short by ``handler_timeout`` "returned".
_TIMED_OUT: Final = object()

logger = logging.getLogger("trimcp.session")

CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"
_DEFAULT: Final = object()


def _closed_reason(exc: BaseException) -> str:
    return f"Connection closed: {exc}" if str(exc) else "Connection closed"


@final
class InFlight:
    """The table entry of one inbound request."""

    __slots__ = ("cancellable", "ctx", "peer_cancelled", "scope")

    def __init__(self, scope: trio.CancelScope, cancellable: bool) -> None:
        self.scope = scope
        self.cancellable = cancellable
        self.ctx: HandlerContext | None = None
        #: Set when the request was cancelled on purpose (peer, session end): no response.
        self.peer_cancelled = False


@final
class Session:
    """One MCP session over one :class:`MessageChannel`; see the module doc.

    Made by :func:`open_session`; not constructed directly.
    """

    def __init__(
        self,
        channel: MessageChannel,
        nursery: trio.Nursery,
        *,
        role: Role,
        registry: Registry,
        middlewares: Middlewares,
        limits: SessionLimits,
        state: SessionState,
        prepare: Callable[[Message], Message] | None = None,
    ) -> None:
        self.channel = channel
        self.role = role
        self.registry = registry
        self.limits = limits
        self.state = state
        self._nursery = nursery
        self._pending = PendingTable(max_pending=limits.max_pending)
        self._in_flight: dict[RequestId, InFlight] = {}
        self._in_flight_slots = trio.Semaphore(limits.max_in_flight)
        self._running = 0
        #: Answers of finished handlers still being sent (see :mod:`._drain`).
        self._answering = 0
        self._admission_send, self._admission_receive = trio.open_memory_channel[
            tuple[Request, RequestRoute, InFlight]
        ](limits.max_queued)
        self._reverse_slots = trio.Semaphore(limits.max_reverse_calls)
        self._background: set[trio.CancelScope] = set()
        self._closed = trio.Event()
        #: The session was ended from this side while the transport may still be up.
        self._ended_locally = False
        #: Watches requests in both directions (see :mod:`._observer`); ``None``: nobody.
        self.observer: RequestObserver | None = None
        self._prepare = prepare
        #: What each session middleware's ``bind`` returned for this session.
        self._bound: dict[int, Middleware | None] = {}
        self._send_stack, self._recv_stack = (
            (middlewares.client_send, middlewares.client_recv)
            if role is Role.CLIENT
            else (middlewares.server_send, middlewares.server_recv)
        )
        self._compose()
        # A stack that changes while the session runs is recomposed at once (and the
        # session stops watching when it ends), so a message never pays for a check.
        self._send_stack.watch(self._compose)
        self._recv_stack.watch(self._compose)

    def _compose(self) -> None:
        chain = self._send_stack.compose(self._write, self, self._bound)
        prepare = self._prepare
        if prepare is None:
            self._send_chain = chain
        else:

            def prepared(message: Message, related: RequestId | None) -> Awaitable[None]:
                return chain(prepare(message), related)

            self._send_chain = prepared
        self._recv_chain = self._recv_stack.compose(self._dispatch, self, self._bound)

    # ------------------------------------------------------------------ introspection
    @property
    def in_flight(self) -> int:
        """Inbound requests whose handlers are running now (at most ``max_in_flight``)."""
        return self._running

    @property
    def queued(self) -> int:
        """Inbound requests read and waiting for an in-flight slot (at most ``max_queued``)."""
        return len(self._in_flight) - self._running

    @property
    def pending(self) -> int:
        """Outbound requests waiting for an answer now."""
        return len(self._pending)

    @property
    def background_tasks(self) -> int:
        """Detached tasks still running."""
        return len(self._background)

    @property
    def dropped_answers(self) -> int:
        """Answers that matched no waiting request (unknown, duplicate or late ids)."""
        return self._pending.dropped

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        """Return once the transport has ended (or the session was closed)."""
        await self._closed.wait()

    # ------------------------------------------------------------------ sending
    def _write(self, message: Message, related: RequestId | None) -> Awaitable[None]:
        # A plain function handing back the channel's awaitable: one frame fewer held
        # by every sender waiting on the transport.
        return self.channel.send(message, related=related)

    async def send_message(self, message: Message, *, related: RequestId | None = None) -> None:
        """Send one message through the send middleware (raw escape hatch)."""
        await self._send_chain(message, related)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related: RequestId | None = None
    ) -> None:
        """Send a notification. Raises :class:`ConnectionClosedError` once the peer is gone."""
        try:
            await self._send_chain(Notification(method=method, params=params), related)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise ConnectionClosedError(_closed_reason(exc)) from exc

    def notify_soon(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification from synchronous code, as a task of the session.

        A session that has ended drops it; a send that fails because the peer is gone
        is dropped too (there is nobody left to tell).
        """
        if self._closed.is_set():
            return

        async def send() -> None:
            with contextlib.suppress(ConnectionClosedError):
                await self.notify(method, params)

        self._nursery.start_soon(send)

    def request(
        self, method: str, params: dict[str, Any] | None = None, **options: Unpack[RequestOptions]
    ) -> Awaitable[dict[str, Any]]:
        """Send a request and wait for its result (see :meth:`_request`). A plain function,
        so an :attr:`observer` wraps the call without a frame more for calls nobody watches."""
        if self.observer is not None:
            return self.observer.outbound(self, self._request, method, params, **options)
        return self._request(method, params, **options)

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its result.

        Args:
          timeout: seconds to wait (default: the session's ``request_timeout``); each
            progress notification for this request restarts it, up to
            ``max_request_timeout`` in total.
          on_progress: called as ``await on_progress(progress, total, message)`` for each
            progress notification; giving it adds a ``progressToken`` to ``_meta``.
          related: the inbound request this one is made for (reverse calls).

        Raises:
          McpError: the peer answered with an error.
          RequestTimeoutError: no answer in time (``notifications/cancelled`` was sent).
          ConnectionClosedError: the peer went away first.
        """
        call = await self._pending.allocate(method, on_progress)
        try:
            if on_progress is not None:
                params = dict(params or {})
                params["_meta"] = {**params.get("_meta", {}), "progressToken": call.id}
            wait = self.limits.request_timeout if timeout is None else timeout
            now = trio.current_time()
            hard_deadline = now + max(wait, self.limits.max_request_timeout)
            sent = False
            try:
                with trio.CancelScope(deadline=now + wait) as timeout_scope:
                    call.timeout_scope = timeout_scope
                    call.hard_deadline = hard_deadline
                    try:
                        await self._send_chain(
                            Request(id=call.id, method=method, params=params), related
                        )
                    except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                        raise ConnectionClosedError(_closed_reason(exc)) from exc
                    sent = True
                    return await call.wait()
            finally:
                if sent and method != "initialize" and (not call.done or self._abandoned(call)):
                    await self._send_cancel(call.id, related)
            raise RequestTimeoutError(f"{method} got no answer within {wait:g} s")
        finally:
            self._pending.release(call)

    async def reverse_request(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        related: RequestId | None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """A request made from a handler context: bounded by ``max_reverse_calls``."""
        async with self._reverse_slots:
            return await self.request(
                method, params, timeout=timeout, on_progress=on_progress, related=related
            )

    async def _send_cancel(self, request_id: RequestId, related: RequestId | None) -> None:
        """Tell the peer we gave up on ``request_id``: shielded and time-bounded."""
        deadline = trio.current_time() + self.limits.cancel_send_timeout
        with trio.CancelScope(shield=True, deadline=deadline):
            try:
                await self._send_chain(
                    Notification(method=CANCELLED, params={"requestId": request_id}), related
                )
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return  # the peer is gone (no suppress(): one object less per cancel)

    # ------------------------------------------------------------------ receiving
    async def _reader(self) -> None:
        reason = "Connection closed"
        # A channel that can hand over what it already holds without a checkpoint lets
        # the reader take a whole burst in one scheduler step: a checkpoint per message
        # would cost a scheduler batch per message under concurrent load.
        receive_nowait = getattr(self.channel, "receive_nowait", None)
        try:
            while True:
                try:
                    message = await self.channel.receive()
                    await self._recv_chain(message, None)
                    while receive_nowait is not None:
                        try:
                            message = receive_nowait()
                        except trio.WouldBlock:
                            break
                        await self._recv_chain(message, None)
                except trio.EndOfChannel:
                    return
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    # Keep the transport's reason (a line over the limit, a reset ...):
                    # it is what the waiting callers need to read.
                    if str(exc):
                        reason = f"Connection closed: {exc}"
                    return
        finally:
            self._end(ConnectionClosedError(reason))

    async def _dispatch(self, message: Message, _related: RequestId | None) -> None:
        if isinstance(message, Request):
            await self._accept_request(message)
        elif isinstance(message, Notification):
            await self._on_notification(message)
        elif isinstance(message, Response | ErrorResponse):
            self._pending.resolve(message)

    async def _accept_request(self, request: Request) -> None:
        if request.id in self._in_flight:
            await self._reply(
                ErrorResponse(
                    id=request.id,
                    error=ErrorObject(
                        code=INVALID_REQUEST,
                        message="Invalid Request: a request with this id is already in flight",
                    ),
                )
            )
            return
        route = self.registry.route(request.method)
        if route is None:
            await self._reply(
                ErrorResponse(
                    id=request.id,
                    error=ErrorObject(
                        code=METHOD_NOT_FOUND, message=f"Method not found: {request.method}"
                    ),
                )
            )
            return
        entry = InFlight(trio.CancelScope(), route.cancellable)
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

    async def _admit(self) -> None:
        """Start queued requests, in arrival order, as in-flight slots free up.

        After each receive (a checkpoint) it starts everything already queued while
        slots are free, without a checkpoint per request.
        """
        queue = self._admission_receive
        async for item in queue:
            while True:
                try:
                    self._in_flight_slots.acquire_nowait()
                except trio.WouldBlock:
                    await self._in_flight_slots.acquire()
                self._running += 1
                self._nursery.start_soon(self._run_request, *item)
                try:
                    item = queue.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break

    async def _run_request(  # noqa: C901 - one flat frame per request (see below)
        self, request: Request, route: RequestRoute, entry: InFlight
    ) -> None:
        reply: Message | None = None
        params = request.params
        meta = params.get("_meta") if params else None
        ctx = HandlerContext(
            self,
            request.id,
            request.method,
            params,
            meta if isinstance(meta, dict) else {},
            entry.scope,
        )
        entry.ctx = ctx
        watch = None
        # One frame for the whole request (no helper coroutine): a parked request's
        # frames are most of what it costs, and each is unwound again on cancellation.
        try:
            if self.observer is not None:
                watch = self.observer.inbound(ctx)
            with entry.scope:
                try:
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
                        await ctx.log_route.finish()  # the error response follows that output
                    raise
                if result is _TIMED_OUT:
                    reply = ErrorResponse(
                        id=request.id,
                        error=ErrorObject(code=REQUEST_TIMEOUT, message="Request timed out"),
                    )
                else:
                    if ctx.log_route is not None:
                        await ctx.log_route.finish()
                    if type(result) is not dict:
                        result = {} if result is None else unstructure(result)
                    reply = Response(id=request.id, result=result)
        except Exception as exc:
            if not entry.peer_cancelled:
                reply = ErrorResponse(
                    id=request.id,
                    error=error_for_exception(exc, method=request.method, request_id=request.id),
                )
        finally:
            ctx._close()
            del self._in_flight[request.id]
            self._running -= 1
            self._in_flight_slots.release()
            if watch is not None:
                cancelled = entry.peer_cancelled or entry.scope.cancel_called
                watch.finished(None if cancelled else reply)
        # A scope cancelled by the handler itself means "no response" too, even when the
        # handler returned (or raised) before a checkpoint delivered the cancellation.
        if reply is not None and not entry.peer_cancelled and not entry.scope.cancel_called:
            self._answering += 1  # a graceful shutdown waits for answers on their way out
            try:
                await self._reply(reply, related=request.id)
            finally:
                self._answering -= 1

    async def _reply(self, message: Message, *, related: RequestId | None = None) -> None:
        try:
            await self._send_chain(message, related)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            logger.debug("peer gone before the answer to %r could be sent", related)

    async def _on_notification(self, note: Notification) -> None:
        params = note.params or {}
        if note.method == CANCELLED:
            self._cancel_inbound(params.get("requestId"))
        elif note.method == PROGRESS:
            await self._on_progress(params)
        handler = self.registry.notification_handler(note.method)
        if handler is not None:
            try:
                await handler(self, note.params)
            except Exception:
                logger.exception("notification handler for %s raised", note.method)

    def _cancel_inbound(self, request_id: object) -> None:
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        entry = self._in_flight.get(request_id)
        if entry is None or not entry.cancellable:
            return  # unknown, finished or initialize: ignored, as the spec allows
        entry.peer_cancelled = True
        entry.scope.cancel()

    async def _on_progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        if not isinstance(token, int) or isinstance(token, bool):
            return
        call = self._pending.get(token)
        progress = params.get("progress")
        if call is None or call.on_progress is None or not isinstance(progress, int | float):
            return
        if call.timeout_scope is not None:
            wait = self.limits.request_timeout
            call.timeout_scope.deadline = min(trio.current_time() + wait, call.hard_deadline)
        total = params.get("total")
        message = params.get("message")
        try:
            await call.on_progress(
                progress,
                total if isinstance(total, int | float) else None,
                message if isinstance(message, str) else None,
            )
        except Exception:
            logger.exception("progress callback for request %r raised", token)

    # ------------------------------------------------------------------ background & end
    def spawn_background(
        self, fn: Callable[..., Awaitable[object]], ctx: BackgroundContext, *args: object
    ) -> None:
        """Run ``fn(ctx, *args)`` in the session nursery until it ends or the session does."""
        if self._closed.is_set():
            raise ConnectionClosedError("the session has ended")
        scope = trio.CancelScope()
        self._background.add(scope)

        async def run() -> None:
            try:
                with scope:
                    await fn(ctx, *args)
            except Exception:
                logger.exception("detached task %r raised", fn)
            finally:
                self._background.discard(scope)

        self._nursery.start_soon(run)

    def _abandoned(self, call: PendingCall) -> bool:
        """Whether ``call`` was failed only because this side closed the session.

        The peer may still be listening then, so it is told about the request with
        ``notifications/cancelled`` like any other request that was given up.
        """
        # Only the close fails a call with ConnectionClosedError while it was written
        # and the transport still worked (each caller has its own copy of the reason).
        return self._ended_locally and isinstance(call.error, ConnectionClosedError)

    def _end(self, reason: McpError, *, local: bool = False) -> None:
        """The session ended: fail waiters, cancel handlers and detached work.

        ``local`` is ``True`` when this side closed it (the transport may still work),
        ``False`` when the transport ended.
        """
        if self._closed.is_set():
            return
        self._ended_locally = local
        self._pending.fail_all(reason)
        for entry in list(self._in_flight.values()):
            entry.peer_cancelled = True
            entry.scope.cancel()
        for scope in list(self._background):
            scope.cancel()
        self._send_stack.unwatch(self._compose)
        self._recv_stack.unwatch(self._compose)
        self._closed.set()
        if self.observer is not None:
            self.observer.ended(self)

    def close(self) -> None:
        """End the session now: cancel its work and fail its waiting callers.

        The transport may still be up, so requests that were written and are given up
        this way are followed by ``notifications/cancelled`` (shielded, time-bounded)
        before the channel is closed.
        """
        self._end(ConnectionClosedError("the session was closed"), local=True)
        self._nursery.cancel_scope.cancel()

"""The session: one nursery, one reader, one cancel scope per request in flight.

Theory of operation
-------------------
:func:`open_session` opens a nursery and starts the *reader*, the only task that reads
the transport. Everything the session does happens in that nursery:

* **Inbound requests** (:mod:`._inbound`). The reader judges each one in arrival order
  (a duplicate id, an unknown method, and what the lifecycle table says about the
  session's phase; an ``initialize`` holds the reader until it has been answered),
  then queues it for an in-flight slot (``max_in_flight``; ``max_queued`` may wait,
  then the reader blocks: backpressure). Each runs in its own task inside a fresh
  :class:`trio.CancelScope`, the lifetime of its :class:`HandlerContext`.
  ``notifications/cancelled``, the handler deadline, the peer going away and the
  session closing all cancel exactly that scope; a cancelled request gets no
  response. Otherwise its outcome (result, or the one error
  :func:`~trimcp.dispatch.error_for_exception` makes of an exception) goes back with
  its id, and only then is its slot freed. In every path its entry is removed and the
  context closed.
* **Outbound requests** take an id and a waiter from the :class:`PendingTable` and wait
  in the caller's task under a timeout scope whose deadline progress pushes back (up to
  a hard maximum). Their progress callbacks run in that same task. When the caller
  stops waiting (timeout or its own cancellation) and the request was written,
  ``notifications/cancelled`` goes out under a shielded, time-bounded scope before the
  caller's scope exits. Reverse calls made by handlers are just outbound requests made
  from a handler's task, so cancellation flows down the tree by itself.
* **Inbound answers** resolve their waiter; an answer nobody waits for is dropped and
  counted. **Notifications** are the engine's (cancellation, progress, the handshake's
  ``initialized``) or go to their callbacks, which run off the reader
  (:mod:`._callbacks`): the reader only reads.
* **Owned work**: detached tasks (``max_background``), notifications queued from
  synchronous code (:mod:`._notifier`), callback tasks. All of it ends with the session.
* **The end.** When the transport breaks, every pending outbound call fails at once
  with :class:`~trimcp.dispatch.ConnectionClosedError`, every handler scope and every
  detached task is cancelled, and :meth:`Session.wait_closed` returns. When the input
  ends cleanly on a channel whose output still works (``half_close``: stdio), the
  pending calls fail too, but the requests already read get ``eof_grace`` seconds to
  finish and be answered first. Leaving the ``open_session`` block cancels the
  nursery, so no task outlives the session.

The phase of the session (new, initializing, operating, draining ...) lives in one
table, :mod:`._lifecycle`. Messages pass the role's *recv* middleware stack on the way
in and its *send* stack on the way out; both are composed when the session starts and
again whenever one of them changes. An ``observer`` sees requests start and end
(:mod:`._observer`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, final

import trio

from trimcp.dispatch import (
    ConnectionClosedError,
    McpError,
    Middleware,
    Middlewares,
    PendingTable,
    Registry,
    RequestRoute,
    Slots,
)
from trimcp.wire import (
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)

from ._callbacks import CallbackQueues, ProgressInbox
from ._channel import MessageChannel
from ._construction import NoPublicConstructor
from ._context import BackgroundContext
from ._deadlines import CallDeadlines
from ._errors import BackgroundLimitError
from ._inbound import InboundRequests, InFlight
from ._lifecycle import Event, Lifecycle, LifecycleError
from ._limits import SessionLimits
from ._notifier import Notifier
from ._observer import RequestObserver
from ._outbound import CANCELLED, OutboundRequests, closed_reason
from ._state import Role, SessionState

__all__ = ["InFlight", "Session"]

logger = logging.getLogger("trimcp.session")

PROGRESS = "notifications/progress"
INITIALIZED = "notifications/initialized"


@final
class Session(InboundRequests, OutboundRequests, metaclass=NoPublicConstructor):
    """One MCP session over one :class:`MessageChannel`; see the module doc.

    Made by :func:`open_session`; calling the class raises :class:`TypeError`.
    """

    __trimcp_factory__ = "trimcp.nursery.open_session()"

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
        exempt: Callable[[Request], bool] | None = None,
        first_request_id: int = 0,
    ) -> None:
        self.channel = channel
        self.role = role
        self.registry = registry
        self.limits = limits
        self.state = state
        #: The session's phase and the table that moves it (see :mod:`._lifecycle`).
        self.lifecycle = Lifecycle(role, state, exempt)
        if role is Role.SERVER and registry.route("initialize") is None:
            self.lifecycle.handle(Event.NO_HANDSHAKE)
        self._nursery = nursery
        self._pending = PendingTable(max_pending=limits.max_pending, first_id=first_request_id)
        self._in_flight: dict[RequestId, InFlight] = {}
        self._in_flight_slots = Slots(limits.max_in_flight)
        self._running = 0
        #: Answers of finished handlers still being sent (see :mod:`._drain`).
        self._answering = 0
        self._admission_send, self._admission_receive = trio.open_memory_channel[
            tuple[Request, RequestRoute, InFlight]
        ](limits.max_queued)
        self._reverse_slots = trio.Semaphore(limits.max_reverse_calls)
        self._background: set[trio.CancelScope] = set()
        #: Detached tasks counted against ``max_background``.
        self._detached = 0
        self._closed = trio.Event()
        #: The session was ended from this side while the transport may still be up.
        self._ended_locally = False
        #: Set once idle after the input ended (``None`` until then).
        self._drained: trio.Event | None = None
        #: Progress inboxes of outbound requests made with ``on_progress``, by id.
        self._progress: dict[RequestId, ProgressInbox] = {}
        self._deadlines = CallDeadlines(nursery.start_soon, self._expire)
        #: ``trio.current_time`` without the two frames of Trio's public wrapper (every
        #: request reads it): the run's clock, which a session never outlives.
        self._now = trio.lowlevel.current_clock().current_time
        self._timed_sends = False
        self._send_nowait: Callable[[Message], object] | None = None
        self._withdraw: Callable[[object], bool] | None = getattr(channel, "withdraw", None)
        self._callbacks = CallbackQueues(self, limits.max_queued_callbacks)
        self._notifier = Notifier(self, limits.max_queued_notifications)
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

    def set_prepare(self, prepare: Callable[[Message], Message] | None) -> None:
        """Replace the hook every outgoing message passes first (``None``: none).

        A client drops its hook once the era is settled to one that needs no stamping:
        each message then skips a call (two frames) on its way out.
        """
        self._prepare = prepare
        self._compose()

    def _compose(self) -> None:
        terminal = self._write
        chain = self._send_stack.compose(terminal, self, self._bound)
        # A send the deadline timer can break: nothing between the call and a channel
        # that can withdraw a message still queued (see ._deadlines).
        self._timed_sends = (
            chain == terminal and getattr(self.channel, "interrupt_send", None) is not None
        )
        prepare = self._prepare
        # A request sent with nothing in between calls the channel itself (see _outbound).
        self._send_direct = self.channel.send if chain == terminal and prepare is None else None
        if prepare is None:
            self._send_chain = chain
        else:

            def prepared(message: Message, related: RequestId | None) -> Awaitable[None]:
                return chain(prepare(message), related)

            self._send_chain = prepared
        # A send that needs no wait: nothing between the session and a channel that can
        # take a message at once (memory pairs), so a request or an answer costs no
        # scheduler round of its own (see _outbound and _inbound).
        put = getattr(self.channel, "send_nowait", None) if chain == terminal else None
        if put is None or prepare is None:
            self._send_nowait = put
        else:

            def put_prepared(message: Message) -> object:
                return put(prepare(message))

            self._send_nowait = put_prepared
        self._recv_chain = self._recv_stack.compose(self._dispatch, self, self._bound)

    # ------------------------------------------------------------------ introspection
    @property
    def in_flight(self) -> int:
        """Inbound requests whose handlers are running now (at most ``max_in_flight``)."""
        return self._running

    @property
    def queued(self) -> int:
        """Inbound requests read and waiting for an in-flight slot: at most ``max_queued``,
        plus the one the admission task holds and the one the reader is handing over."""
        return len(self._in_flight) - self._running - self._answering

    @property
    def answering(self) -> int:
        """Answers being written now; each holds its in-flight slot until written."""
        return self._answering

    @property
    def pending(self) -> int:
        """Outbound requests waiting for an answer now."""
        return len(self._pending)

    @property
    def background_tasks(self) -> int:
        """Detached tasks still running."""
        return len(self._background)

    @property
    def queued_notifications(self) -> int:
        """Notifications from ``notify_soon`` not yet written (``max_queued_notifications``)."""
        return len(self._notifier)

    @property
    def dropped_answers(self) -> int:
        """Answers that matched no waiting request (unknown, duplicate or late ids)."""
        return self._pending.dropped

    @property
    def dropped_notifications(self) -> int:
        """Notifications of ``notify_soon`` dropped because its queue was full."""
        return self._notifier.dropped

    @property
    def dropped_callbacks(self) -> int:
        """Notifications dropped because their callback's queue was full."""
        return self._callbacks.dropped

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
            raise ConnectionClosedError(closed_reason(exc)) from exc

    def notify_soon(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification from synchronous code, through the session's bounded,
        coalescing queue (see :mod:`._notifier`).

        A session that has ended drops it; a send that fails because the peer is gone
        is dropped too (there is nobody left to tell).
        """
        if not self._closed.is_set():
            self._notifier.push(method, params)

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
                    if getattr(self.channel, "half_close", False):
                        await self._drain_input_ended()
                    return
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    # Keep the transport's reason (a line over the limit, a reset ...):
                    # it is what the waiting callers need to read.
                    if str(exc):
                        reason = f"Connection closed: {exc}"
                    return
        finally:
            self._end(ConnectionClosedError(reason))

    async def _drain_input_ended(self) -> None:
        """The input ended and the output still works: answer what was already read
        (within ``eof_grace``) before the session ends. No answer can arrive any more,
        so the calls waiting for one fail now."""
        self.lifecycle.handle(Event.INPUT_ENDED)
        self._fail_pending(ConnectionClosedError("Connection closed: the input ended"))
        self._drained = trio.Event()
        self._idle_check()
        with trio.move_on_after(self.limits.eof_grace):
            await self._drained.wait()

    async def _dispatch(self, message: Message, _related: RequestId | None) -> None:
        if isinstance(message, Request):
            await self._accept_request(message)
        elif isinstance(message, Notification):
            self._on_notification(message)
        elif isinstance(message, Response | ErrorResponse):
            self._pending.resolve(message)
            if self._progress:
                inbox = self._progress.get(message.id)  # type: ignore[arg-type]
                if inbox is not None:
                    inbox.wake.set()

    def _on_notification(self, note: Notification) -> None:
        method = note.method
        if method == CANCELLED:
            self._cancel_inbound((note.params or {}).get("requestId"))
        elif method == PROGRESS:
            self._on_progress(note.params or {})
        elif method == INITIALIZED and self.role is Role.SERVER:
            try:
                self.lifecycle.handle(Event.INITIALIZED)
            except LifecycleError as exc:
                logger.info("ignored %s: %s", method, exc)
        handler = self.registry.notification_handler(method)
        if handler is not None:
            self._callbacks.push(method, handler, note.params)

    # ------------------------------------------------------------------ background & end
    def spawn_background(
        self,
        fn: Callable[..., Awaitable[object]],
        ctx: BackgroundContext,
        *args: object,
        counted: bool = True,
    ) -> None:
        """Run ``fn(ctx, *args)`` in the session nursery until it ends or the session does.

        Raises :class:`ConnectionClosedError` once the session has ended, and
        :class:`BackgroundLimitError` when ``max_background`` detached tasks already run
        (``counted=False`` is for the engine's own helpers, bounded by their owners).
        """
        if self._closed.is_set():
            raise ConnectionClosedError("the session has ended")
        if counted:
            if self._detached >= self.limits.max_background:
                raise BackgroundLimitError(self.limits.max_background)
            self._detached += 1
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
                if counted:
                    self._detached -= 1

        self._nursery.start_soon(run)

    def _end(self, reason: McpError, *, local: bool = False) -> None:
        """The session ended: fail waiters, cancel handlers and detached work.

        ``local`` is ``True`` when this side closed it (the transport may still work),
        ``False`` when the transport ended.
        """
        if self._closed.is_set():
            return
        self.lifecycle.handle(Event.CLOSE)
        self._ended_locally = local
        self._fail_pending(reason)
        for entry in list(self._in_flight.values()):
            entry.peer_cancelled = True
            entry.cause = entry.cause or "session_ended"
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

"""Outbound requests of a session: ids, waiting, progress, timeouts, cancellation.

Part of :class:`~trimcp.nursery.Session` (its module doc tells the whole story); this
mixin holds the outbound side so that each file stays one concern.

A request takes an id and a waiter from the :class:`~trimcp.dispatch.PendingTable` and
waits in the caller's task under a timeout scope. Each progress notification for it
restarts the caller's wait (up to ``max_request_timeout`` in all) and is queued in the call's
:class:`~trimcp.nursery._callbacks.ProgressInbox`, where the waiting caller runs its
``on_progress``: off the reader, in order, every one before the result; the other
notification callbacks of what arrived before the answer have run too
(:meth:`~trimcp.nursery._callbacks.CallbackQueues.caught_up`). When the caller
stops waiting and the request was written, ``notifications/cancelled`` goes out under a
shielded, time-bounded scope before the caller's scope exits.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, final

import trio

from trimcp.dispatch import (
    ConnectionClosedError,
    McpError,
    PendingCall,
    ProgressCallback,
    RequestTimeoutError,
)
from trimcp.wire import Message, Notification, RequestId, make_request

from ._callbacks import CallbackQueues, ProgressInbox
from ._channel import MessageChannel
from ._deadlines import CallDeadlines
from ._observer import RequestObserver

if TYPE_CHECKING:
    from trimcp.dispatch import PendingTable, Terminal

    from ._limits import SessionLimits

__all__ = ["CANCELLED", "OutboundRequests", "closed_reason"]

logger = logging.getLogger("trimcp.session")

CANCELLED = "notifications/cancelled"


@final
class _NoScope:
    """Stands in for the timeout scope of a call the deadline timer bounds."""

    __slots__ = ()
    cancelled_caught: Final = False

    def __enter__(self) -> _NoScope:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None


_NO_SCOPE: Final = _NoScope()


class _ChannelSend(Protocol):
    """A channel's ``send`` (see :class:`~trimcp.nursery.MessageChannel`)."""

    def __call__(
        self, message: Message, *, related: RequestId | None = None
    ) -> Awaitable[None]: ...


def closed_reason(exc: BaseException) -> str:
    return f"Connection closed: {exc}" if str(exc) else "Connection closed"


class OutboundRequests:
    """The outbound-request half of :class:`~trimcp.nursery.Session` (a mixin)."""

    # Provided by Session.
    limits: SessionLimits
    observer: RequestObserver | None
    _pending: PendingTable
    _send_chain: Terminal
    #: The channel's ``send_nowait`` when nothing stands between it and the session.
    _send_nowait: Callable[[Message], object] | None
    #: The channel's ``withdraw`` (see :class:`~trimcp.nursery.MessageChannel`), or None.
    _withdraw: Callable[[object], bool] | None
    #: The channel's ``send`` when nothing stands between it and the session (the send
    #: chain is then ``_write``, one frame more per request).
    _send_direct: _ChannelSend | None
    _reverse_slots: trio.Semaphore
    #: Progress inboxes of outbound requests made with ``on_progress``, by id.
    _progress: dict[RequestId, ProgressInbox]
    _callbacks: CallbackQueues
    #: The session was ended from this side while the transport may still be up.
    _ended_locally: bool
    channel: MessageChannel
    _deadlines: CallDeadlines
    #: The run's clock (``trio.current_time``).
    _now: Callable[[], float]
    #: Sends that the deadline timer can break: no send middleware, and a channel
    #: with ``interrupt_send`` (see :mod:`._deadlines`).
    _timed_sends: bool

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
        announce_cancel: bool = True,
    ) -> Awaitable[dict[str, Any]]:
        """Send a request and wait for its result (see :meth:`_request`). A plain function,
        so an :attr:`observer` wraps the call without a frame more for calls nobody
        watches; the options go on by position (no keyword dict built per call)."""
        if self.observer is not None:
            return self.observer.outbound(
                self,  # type: ignore[arg-type]  # a mixin of Session
                self._request,
                method,
                params,
                timeout=timeout,
                on_progress=on_progress,
                related=related,
                announce_cancel=announce_cancel,
            )
        return self._request(method, params, timeout, on_progress, related, announce_cancel)

    async def _request(  # noqa: C901 - one flat frame per call (see the send below)
        self,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
        announce_cancel: bool = True,
    ) -> dict[str, Any]:
        """Send a request and wait for its result.

        Args:
          timeout: seconds to wait (default: the session's ``request_timeout``); each
            progress notification for this request restarts that same wait, up to
            ``max_request_timeout`` in total (or ``timeout``, if it is longer).
          on_progress: called as ``await on_progress(progress, total, message)`` for each
            progress notification, in this task, in order, all before the result is
            returned; giving it adds a ``progressToken`` to ``_meta``.
          related: the inbound request this one is made for (reverse calls).
          announce_cancel: ``False`` for a request made before the handshake (the era
            probe): a peer of the handshake era expects nothing but ``initialize`` and
            pings then, so giving it up sends no ``notifications/cancelled``
            (``initialize`` itself is never followed by one either).

        Raises:
          McpError: the peer answered with an error.
          RequestTimeoutError: no answer in time (``notifications/cancelled`` was sent).
          ConnectionClosedError: the peer went away first.
        """
        call = await self._pending.allocate(method, on_progress)
        try:
            inbox: ProgressInbox | None = None
            if on_progress is not None:
                params = dict(params or {})
                params["_meta"] = {**params.get("_meta", {}), "progressToken": call.id}
                inbox = self._progress[call.id] = ProgressInbox(self.limits.max_queued_callbacks)
            wait = self.limits.request_timeout if timeout is None else timeout
            now = self._now()
            call.restart = wait
            call.hard_deadline = now + max(wait, self.limits.max_request_timeout)
            request = make_request(call.id, method, params)
            # Bounded by the session's deadline timer instead of a scope of its own when
            # the timer can break every wait of the call (see ._deadlines): no progress
            # to follow, no send middleware, a channel that can withdraw a queued send.
            timed = inbox is None and self._timed_sends and self._deadlines.add(call, now + wait)
            sent = False
            #: What the channel's send_nowait returned for the request (a queued line's key).
            queued: object = None
            try:
                scope: trio.CancelScope | _NoScope = _NO_SCOPE
                if not timed:
                    scope = call.timeout_scope = trio.CancelScope(deadline=now + wait)
                with scope:
                    # Sent in this frame (no helper coroutine): at 10,000 calls in flight
                    # nearly every call waits in its send, and each frame it holds is an
                    # object more for the garbage collector to walk.
                    put = self._send_nowait if timed else None
                    try:
                        if put is not None:
                            # Put at once when the channel takes it so: no scheduler round
                            # for the send (the wait for the answer is the checkpoint).
                            await trio.lowlevel.checkpoint_if_cancelled()
                            try:
                                queued = put(request)
                            except trio.WouldBlock:
                                put = None
                        if put is None:
                            direct = self._send_direct
                            if direct is not None:
                                await direct(request, related=related)
                            else:
                                await self._send_chain(request, related)
                    except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                        raise ConnectionClosedError(closed_reason(exc)) from exc
                    sent = True
                    if inbox is None:
                        result = await call.wait()
                    else:
                        result = await self._wait_reporting(call, inbox)
            finally:
                if timed:
                    self._deadlines.remove(call)
                announce = announce_cancel and method != "initialize"
                # (_abandoned is asked only once this side ended the session.)
                ended = self._ended_locally
                if (
                    sent
                    and announce
                    and (not call.done or (ended and self._abandoned(call)))
                    and not self._withdrawn(queued)
                ):
                    await self._send_cancel(call.id, related)
            if scope.cancelled_caught:
                raise RequestTimeoutError(f"{method} got no answer within {wait:g} s")
            # What the peer said before answering reaches its callbacks first.
            if self._callbacks.outstanding:
                await self._callbacks.caught_up()
            return result
        finally:
            self._pending.release(call)
            if on_progress is not None:
                del self._progress[call.id]

    def _withdrawn(self, queued: object) -> bool:
        """Whether a request the channel queued (``queued``: its key) was taken back
        before it was written: then the peer never sees it, and no cancellation is due."""
        withdraw = self._withdraw
        return queued is not None and withdraw is not None and withdraw(queued)

    def _expire(self, call: PendingCall) -> None:
        """The deadline timer's verdict on ``call``: it timed out (see :mod:`._deadlines`)."""
        error = RequestTimeoutError(f"{call.method} got no answer within {call.restart:g} s")
        waiting = call.waiting
        task = call.task
        if call.expire(error) and not waiting and task is not None:
            interrupt = getattr(self.channel, "interrupt_send", None)
            if interrupt is not None:
                interrupt(task, error)

    async def _wait_reporting(self, call: PendingCall, inbox: ProgressInbox) -> dict[str, Any]:
        """Wait for ``call``'s answer, running its progress callback in this task as the
        notifications arrive: in order, and every one received before the answer."""
        on_progress = call.on_progress
        assert on_progress is not None
        items = inbox.items
        while True:
            inbox.wake = trio.Event()
            while items:
                progress, total, message = items.popleft()
                try:
                    await on_progress(progress, total, message)
                except Exception:
                    logger.exception("progress callback for request %r raised", call.id)
            if call.done:
                return await call.wait()
            await inbox.wake.wait()

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

    def _on_progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        if not isinstance(token, int) or isinstance(token, bool):
            return
        inbox = self._progress.get(token)
        progress = params.get("progress")
        if inbox is None or not isinstance(progress, int | float):
            return
        call = self._pending.get(token)
        if call is not None and call.timeout_scope is not None:  # the caller's wait restarts
            deadline = trio.current_time() + call.restart
            call.timeout_scope.deadline = min(deadline, call.hard_deadline)
        total = params.get("total")
        message = params.get("message")
        inbox.push(
            (
                progress,
                total if isinstance(total, int | float) else None,
                message if isinstance(message, str) else None,
            )
        )

    def _abandoned(self, call: PendingCall) -> bool:
        """Whether ``call`` was failed only because this side closed the session.

        The peer may still be listening then, so it is told about the request with
        ``notifications/cancelled`` like any other request that was given up.
        """
        # Only the close fails a call with ConnectionClosedError while it was written
        # and the transport still worked (each caller has its own copy of the reason).
        return self._ended_locally and isinstance(call.error, ConnectionClosedError)

    def _fail_pending(self, reason: McpError) -> None:
        self._pending.fail_all(reason)
        for inbox in self._progress.values():
            inbox.wake.set()

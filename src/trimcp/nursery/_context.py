"""Handler contexts: what a request handler (or detached work) can do while it runs.

A :class:`HandlerContext` is bound to one inbound request and lives exactly as long as
it: its cancel scope *is* the request's scope, and once the request has ended every hook
raises :class:`~trimcp.dispatch.ContextClosedError`. Reverse calls made through it
(:meth:`HandlerContext.request`) run in the handler's own task tree, so cancelling the
forward request cancels them too, and the session tells the peer about each one.

:func:`detach_for_background` is the way out of a dying request: it starts work in the
session's nursery with a :class:`BackgroundContext`, which is bound to the session
instead and can still send notifications until the session ends.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVarTuple

import trio

from trimcp.dispatch import ContextClosedError, ProgressCallback
from trimcp.wire import RequestId, is_request_id

if TYPE_CHECKING:
    from ._session import Session
    from ._state import SessionState

__all__ = [
    "BackgroundContext",
    "Caller",
    "HandlerContext",
    "PendingOutput",
    "detach_for_background",
]

Ts = TypeVarTuple("Ts")


class Caller(Protocol):
    """Who sent a request, as the transport authenticated it (an authorization principal).

    The core only tells callers apart: ``identity`` is a stable text naming the caller
    (the same user through the same client gives the same text whatever token it
    presents). What else a principal holds (subject, client, scopes, claims) belongs to
    the layer that verified it.
    """

    @property
    def identity(self) -> str: ...


class PendingOutput(Protocol):
    """Messages a request queued that must go out before its response."""

    async def finish(self) -> None:
        """Send them (the request's scope still applies)."""


class HandlerContext:
    """The context of one inbound request.

    Attributes:
      request_id: the id of the request being handled.
      method: its method name.
      params: its params: the structured object when the method was registered with a
        params type, otherwise the raw ``dict`` (or ``None``).
      meta: the request's ``_meta`` object (empty when absent).
      cancel_scope: the request's cancel scope. Cancelling it ends the request with no
        response, exactly as a ``notifications/cancelled`` from the peer would.
      state: the protocol view of this one request when it differs from the session's:
        a stateless-era request carries its own version and client capabilities, so
        the server sets a per-request :class:`SessionState` here (``None``: the
        session's applies).
      extension: opaque per-request data of the layer above (the server keeps the
        stateless era's input-round bookkeeping here).
      log_route: output the layer above queued for this request while it ran (the
        server's forwarded log records), or ``None``: created on first use, so a request
        that logs nothing pays nothing. When the handler returns or raises an
        :class:`Exception`, the session awaits its ``finish()`` inside the request's
        scope before the response, so that output precedes the answer.
    """

    __trimcp_context__ = True

    __slots__ = (
        "_closed",
        "_last_progress",
        "cancel_scope",
        "extension",
        "log_route",
        "meta",
        "method",
        "params",
        "principal",
        "request_id",
        "session_object",
        "state",
    )

    def __init__(
        self,
        session: Session,
        request_id: RequestId,
        method: str,
        params: Any,
        meta: dict[str, Any],
        cancel_scope: trio.CancelScope,
    ) -> None:
        self.session_object = session
        self.request_id = request_id
        self.method = method
        self.params = params
        self.meta = meta
        self.cancel_scope = cancel_scope
        self._closed = False
        self._last_progress: float | None = None
        self.state: SessionState | None = None
        self.extension: Any = None
        self.log_route: PendingOutput | None = None
        self.principal: Caller | None = None

    @property
    def session(self) -> SessionState:
        """The protocol view of this request: version, both sides' info and capabilities
        (the session's, or this request's own in the stateless era)."""
        state = self.state
        return self.session_object.state if state is None else state

    @property
    def progress_token(self) -> str | int | None:
        """The caller's ``_meta.progressToken``, or ``None`` when it wants no progress."""
        token = self.meta.get("progressToken")
        return token if is_request_id(token) else None  # (a token's type is an id's)

    @property
    def closed(self) -> bool:
        """``True`` once the request has ended (answered, failed or cancelled)."""
        return self._closed

    def _check(self, what: str) -> None:
        if self._closed:
            raise ContextClosedError(
                f"cannot {what}: request {self.request_id!r} ({self.method}) has ended; "
                "use detach_for_background() for work that outlives its request"
            )

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Send a request to the peer on behalf of this request (a reverse call).

        It runs in the caller's task, inside this request's scope: cancelling the request
        cancels the reverse call, and the peer gets ``notifications/cancelled`` for it
        before the request's scope exits. Several may run at once from a nursery.
        """
        self._check(f"send {method}")
        return await self.session_object.reverse_request(
            method, params, related=self.request_id, timeout=timeout, on_progress=on_progress
        )

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification that belongs to this request."""
        self._check(f"send {method}")
        await self.session_object.notify(method, params, related=self.request_id)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` for this request.

        A no-op when the caller sent no ``progressToken`` (still a checkpoint, so a
        loop built on it can be cancelled). Progress must not decrease: a smaller value
        than the last one raises :class:`ValueError`, because the spec requires
        progress to increase with each notification.
        """
        self._check("report progress")
        token = self.progress_token
        if token is None:
            await trio.lowlevel.checkpoint()
            return
        if self._last_progress is not None and progress < self._last_progress:
            raise ValueError(
                f"progress must not decrease (was {self._last_progress}, got {progress})"
            )
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)

    def detach_for_background(
        self, fn: Callable[[BackgroundContext, *Ts], Awaitable[object]], *args: *Ts
    ) -> None:
        """Run ``fn(background_ctx, *args)`` in the session's nursery; see the module doc."""
        detach_for_background(self, fn, *args)

    def _close(self) -> None:
        self._closed = True


class BackgroundContext:
    """The session-bound context of detached work. It ends with the session."""

    __slots__ = ("origin_request_id", "session_object")

    def __init__(self, session: Session, origin_request_id: RequestId | None) -> None:
        self.session_object = session
        #: The request that detached this work (for logs; nothing is routed by it).
        self.origin_request_id = origin_request_id

    @property
    def session(self) -> SessionState:
        """The negotiated session view."""
        return self.session_object.state

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification that belongs to no request."""
        await self.session_object.notify(method, params, related=None)


def detach_for_background(
    ctx: HandlerContext,
    fn: Callable[[BackgroundContext, *Ts], Awaitable[object]],
    *args: *Ts,
) -> None:
    """Move ``fn(background_ctx, *args)`` out of ``ctx``'s request into its session.

    The work starts at once in the session-level nursery, so it outlives the request's
    response and its cancellation; it is cancelled when the session closes. It gets a
    :class:`BackgroundContext` bound to the session, which can still send
    notifications. An exception it raises is logged and does not end the session.
    """
    ctx._check("detach work")
    ctx.session_object.spawn_background(
        fn, BackgroundContext(ctx.session_object, ctx.request_id), *args
    )

"""Request observers: how tracing and metrics watch a session's requests.

A session may have one :class:`RequestObserver` (``session.observer``; usually set by a
:class:`~trimcp.dispatch.SessionMiddleware` when it is bound to the session). Without
one, a request costs one attribute test more; with one:

* :meth:`RequestObserver.inbound` is called in an inbound request's own task, before its
  handler runs, and the :class:`InboundWatch` it returns hears once how the request
  ended. Because it runs in that task, what it puts in the task's context (a current
  span) is seen by the handler, by the tasks the handler starts, and by the reverse
  calls made from it: a trace follows the nursery tree.
* :meth:`RequestObserver.outbound` wraps each outbound request (a call, or a reverse
  call from a handler) in the caller's task: it may add to the request's params (trace
  context in ``_meta``) and sees its outcome, a result or the exception it raised
  (:class:`trio.Cancelled` included).
* :meth:`RequestObserver.ended` is called once when the session ends.

Observers must be quick and must not raise: they run on the request path.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack

from trimcp.dispatch import ProgressCallback
from trimcp.wire import Message, RequestId

if TYPE_CHECKING:
    from ._context import HandlerContext
    from ._session import Session

__all__ = ["InboundWatch", "OutboundCall", "RequestObserver", "RequestOptions"]


class RequestOptions(TypedDict, total=False):
    """The keyword options of ``Session.request``."""

    timeout: float | None
    on_progress: ProgressCallback | None
    related: RequestId | None
    announce_cancel: bool


class OutboundCall(Protocol):
    """What :meth:`RequestObserver.outbound` calls to send the request and wait."""

    def __call__(
        self, method: str, params: dict[str, Any] | None = None, **options: Unpack[RequestOptions]
    ) -> Awaitable[dict[str, Any]]: ...


class InboundWatch(Protocol):
    """The observer's hold on one inbound request."""

    def finished(self, reply: Message | None) -> None:
        """The request ended: ``reply`` is its answer (a response or an error), or
        ``None`` when it was cancelled and gets no answer."""


class RequestObserver(Protocol):
    """Watches the requests of the sessions it was given to; see the module doc."""

    def inbound(self, ctx: HandlerContext) -> InboundWatch | None:
        """An inbound request's handler is about to run (in its task)."""

    def outbound(
        self,
        session: Session,
        send: OutboundCall,
        method: str,
        params: dict[str, Any] | None,
        **options: Unpack[RequestOptions],
    ) -> Awaitable[dict[str, Any]]:
        """Send an outbound request through ``send`` (at most once) and return its result."""

    def ended(self, session: Session) -> None:
        """``session`` has ended."""

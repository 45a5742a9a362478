"""What the ready-made middleware share: both directions of one role, state per session.

A :class:`RoleMiddleware` is installed on a role's two stacks at once with
:meth:`RoleMiddleware.install` (``server_recv`` + ``server_send``, or ``client_recv`` +
``client_send``). Each side is a :class:`~trimcp.dispatch.SessionMiddleware`, so the
middleware knows the session every message belongs to (request ids are per session)
and can answer a request itself (:meth:`RoleMiddleware.answer`). Its per-session state
lives in a weak table and goes with the session.

:class:`Requests` pairs requests with their answers in one direction (bounded: a
request that never gets an answer, one dropped by an inner middleware say, is
forgotten once ``max_tracked`` newer ones are waiting).
"""

from __future__ import annotations

import collections
import weakref
from collections.abc import Awaitable
from typing import Any, Final, Generic, Literal, TypeVar, final

from trimcp.dispatch import CallNext, Middleware, Middlewares
from trimcp.nursery import Session
from trimcp.wire import ErrorObject, ErrorResponse, Message, Request, RequestId, Response

__all__ = ["DEFAULT_MAX_TRACKED", "Requests", "RoleMiddleware", "answer"]

#: Requests one session's pairing table remembers while they wait for their answer.
DEFAULT_MAX_TRACKED: Final = 4096

T = TypeVar("T")
Role = Literal["server", "client"]


class RoleMiddleware:
    """Base of a middleware that sees both directions of a role; see the module doc.

    Subclasses implement :meth:`received` and :meth:`sending`; the defaults pass the
    message on.
    """

    def install(self, middlewares: Middlewares, role: Role = "server") -> Middlewares:
        """Add this middleware to ``role``'s receive and send stacks; returns them."""
        if role == "server":
            middlewares.server_recv.add(_Side(self, inbound=True))
            middlewares.server_send.add(_Side(self, inbound=False))
        else:
            middlewares.client_recv.add(_Side(self, inbound=True))
            middlewares.client_send.add(_Side(self, inbound=False))
        return middlewares

    def received(self, session: Session, message: Message, call_next: CallNext) -> Awaitable[None]:
        """A message on its way in (after the transport decoded it)."""
        return call_next(message)

    def sending(self, session: Session, message: Message, call_next: CallNext) -> Awaitable[None]:
        """A message on its way out."""
        return call_next(message)


@final
class _Side:
    """One stack's face of a :class:`RoleMiddleware`."""

    __slots__ = ("inbound", "owner")

    def __init__(self, owner: RoleMiddleware, *, inbound: bool) -> None:
        self.owner = owner
        self.inbound = inbound

    def bind(self, session: Session) -> Middleware:
        handle = self.owner.received if self.inbound else self.owner.sending

        def middleware(message: Message, call_next: CallNext) -> Awaitable[None]:
            return handle(session, message, call_next)

        return middleware


async def answer(
    session: Session,
    request: Request,
    *,
    result: dict[str, Any] | None = None,
    error: ErrorObject | None = None,
) -> None:
    """Answer ``request`` from a receive middleware instead of its handler.

    The answer goes out through the send stack like any other, on the request's own
    stream (its POST's response, over HTTP).
    """
    message: Message = (
        ErrorResponse(id=request.id, error=error)
        if error is not None
        else Response(id=request.id, result=result or {})
    )
    await session.send_message(message, related=request.id)


class Requests(Generic[T]):
    """Per-session tables of what was noted about each request until its answer."""

    def __init__(self, max_tracked: int = DEFAULT_MAX_TRACKED) -> None:
        if max_tracked <= 0:
            raise ValueError("max_tracked must be positive")
        self.max_tracked = max_tracked
        self._tables: weakref.WeakKeyDictionary[Session, collections.OrderedDict[RequestId, T]] = (
            weakref.WeakKeyDictionary()
        )

    def note(self, session: Session, request_id: RequestId, value: T) -> None:
        table = self._tables.get(session)
        if table is None:
            table = self._tables[session] = collections.OrderedDict()
        table[request_id] = value
        if len(table) > self.max_tracked:
            table.popitem(last=False)

    def pop(self, session: Session, request_id: RequestId | None) -> T | None:
        table = self._tables.get(session)
        if table is None or request_id is None:
            return None
        return table.pop(request_id, None)

    def tracked(self, session: Session) -> int:
        table = self._tables.get(session)
        return 0 if table is None else len(table)

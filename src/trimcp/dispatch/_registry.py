"""Method and notification registries, one per side of a session.

A request handler is ``async (ctx, params) -> result``. With a ``params_type`` (an attrs
class) the session structures the raw params into it with the strict converter before
the handler runs, and a failure is answered with ``-32602`` naming the JSON path; without
one the handler gets the raw ``dict`` (or ``None``): that is the escape hatch for methods
trimcp does not know. A handler returns the result object: a ``dict``, or an attrs
instance that is unstructured on the way out.

Notification handlers are ``async (session, params) -> None``. They run off the
session's reader, in arrival order per method, so they may take their time and may call
back into their own session (see :mod:`trimcp.nursery._callbacks`); unknown
notifications are ignored, as JSON-RPC requires.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, final

import attrs

__all__ = ["NotificationHandler", "Registry", "RequestHandler", "RequestRoute"]

RequestHandler = Callable[[Any, Any], Awaitable[Any]]
NotificationHandler = Callable[[Any, "dict[str, Any] | None"], Awaitable[None]]


@final
@attrs.frozen
class RequestRoute:
    """A registered request method."""

    method: str
    handler: RequestHandler
    params_type: type[Any] | None = None
    #: ``False`` for methods the peer may not cancel (``initialize``).
    cancellable: bool = True


@final
class Registry:
    """Maps method names to handlers for one side of a session."""

    def __init__(self) -> None:
        self._requests: dict[str, RequestRoute] = {}
        self._notifications: dict[str, NotificationHandler] = {}

    def add_request(
        self,
        method: str,
        handler: RequestHandler,
        *,
        params_type: type[Any] | None = None,
        cancellable: bool = True,
    ) -> None:
        """Register (or replace) the handler of a request method."""
        self._requests[method] = RequestRoute(method, handler, params_type, cancellable)

    def add_notification(self, method: str, handler: NotificationHandler) -> None:
        """Register (or replace) the handler of a notification method."""
        self._notifications[method] = handler

    def request(
        self, method: str, *, params_type: type[Any] | None = None, cancellable: bool = True
    ) -> Callable[[RequestHandler], RequestHandler]:
        """Decorator form of :meth:`add_request`."""

        def register(handler: RequestHandler) -> RequestHandler:
            self.add_request(method, handler, params_type=params_type, cancellable=cancellable)
            return handler

        return register

    def notification(self, method: str) -> Callable[[NotificationHandler], NotificationHandler]:
        """Decorator form of :meth:`add_notification`."""

        def register(handler: NotificationHandler) -> NotificationHandler:
            self.add_notification(method, handler)
            return handler

        return register

    def route(self, method: str) -> RequestRoute | None:
        return self._requests.get(method)

    def notification_handler(self, method: str) -> NotificationHandler | None:
        return self._notifications.get(method)

    def methods(self) -> Iterator[str]:
        return iter(tuple(self._requests))

    def remove_request(self, method: str) -> None:
        self._requests.pop(method, None)

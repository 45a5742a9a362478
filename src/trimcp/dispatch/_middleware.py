"""The four middleware stacks: {client, server} x {send, recv}.

A middleware is an ``async`` callable ``(message, call_next) -> None``. It sees every
message going its way, may look at it, replace it (``await call_next(other)``), or drop it
(return without calling ``call_next``). Stacks compose like an onion: the first
middleware added is the outermost, so on the send side it sees a message first, and on
the receive side it also sees a message first (right after the transport decoded it).

The stacks are named by direction, not by message kind: a server's reverse-call request
(``sampling/createMessage``) passes ``server_send``, and the client's answer to it passes
``server_recv`` on its way back in; the client sees the request in ``client_recv`` and
sends its answer through ``client_send``.

Composition happens once per session (and again only if a stack changes), so an empty
stack costs nothing on the hot path: the terminal function is called directly.

A middleware that needs its session (state per session, answering a request itself,
rate limits per session) is a :class:`SessionMiddleware`: an object with
``bind(session)``, called once per session as the stack is composed for it. It returns
the middleware for that session, or ``None`` to take no place in the chain (an object
that only wants to see the session, such as a request observer, then costs nothing per
message).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final, Protocol, TypeVar, final

import attrs

from trimcp.wire import Message, RequestId

__all__ = [
    "CallNext",
    "Middleware",
    "MiddlewareStack",
    "Middlewares",
    "SessionMiddleware",
    "Terminal",
]

CallNext = Callable[[Message], Awaitable[None]]
Middleware = Callable[[Message, CallNext], Awaitable[None]]
#: What a composed stack calls last. ``related`` is routing information for the transport
#: (the id of the inbound request a message belongs to, or ``None``); middleware never
#: sees it, so replacing a message cannot misroute it.
Terminal = Callable[[Message, "RequestId | None"], Awaitable[None]]


class SessionMiddleware(Protocol):
    """A middleware made for each session: see the module doc."""

    def bind(self, session: Any) -> Middleware | None:
        """The middleware for ``session`` (a :class:`~trimcp.nursery.Session`), or ``None``."""
        ...


M = TypeVar("M", bound="Middleware | SessionMiddleware")


@final
class MiddlewareStack:
    """An ordered list of middleware for one direction of one role."""

    def __init__(self, name: str) -> None:
        self.name: Final = name
        self._items: list[Middleware | SessionMiddleware] = []
        #: Bumped on every change so sessions know to recompose.
        self.version = 0

    def add(self, middleware: M) -> M:
        """Append ``middleware`` (innermost so far). Usable as a decorator."""
        self._items.append(middleware)
        self.version += 1
        return middleware

    def remove(self, middleware: Middleware | SessionMiddleware) -> None:
        """Remove a middleware added earlier."""
        self._items.remove(middleware)
        self.version += 1

    def __iter__(self) -> Iterator[Middleware | SessionMiddleware]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def compose(self, terminal: Terminal, session: object = None) -> Terminal:
        """Return one function that runs every middleware, then ``terminal``.

        ``session`` is what each :class:`SessionMiddleware` is bound to.

        Each layer is a plain function that returns its middleware's awaitable, and
        each ``call_next`` a plain function that returns the next layer's: a message
        held up inside the stack (a sender queued on the transport's write lock, a
        thousand of them in a burst) keeps one frame per middleware alive, not three.
        """
        chain = terminal
        for item in reversed(self._items):
            middleware = _bound(item, session)
            if middleware is not None:
                chain = _layer(middleware, chain)
        return chain

    def __repr__(self) -> str:
        return f"<MiddlewareStack {self.name} ({len(self._items)} middleware)>"


def _bound(item: Middleware | SessionMiddleware, session: object) -> Middleware | None:
    bind = getattr(item, "bind", None)
    if bind is None:
        return item  # type: ignore[return-value]
    bound: Middleware | None = bind(session)
    return bound


def _layer(middleware: Middleware, inner: Terminal) -> Terminal:
    def run(message: Message, related: RequestId | None) -> Awaitable[None]:
        def call_next(nxt: Message) -> Awaitable[None]:
            return inner(nxt, related)

        return middleware(message, call_next)

    return run


@final
@attrs.define(frozen=True)
class Middlewares:
    """The four stacks. A session of role R uses ``R_send`` and ``R_recv``."""

    client_send: MiddlewareStack = attrs.field(factory=lambda: MiddlewareStack("client_send"))
    client_recv: MiddlewareStack = attrs.field(factory=lambda: MiddlewareStack("client_recv"))
    server_send: MiddlewareStack = attrs.field(factory=lambda: MiddlewareStack("server_send"))
    server_recv: MiddlewareStack = attrs.field(factory=lambda: MiddlewareStack("server_recv"))

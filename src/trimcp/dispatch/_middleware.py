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

Composition happens once per session, so an empty stack costs nothing on the hot path:
the terminal function is called directly. A stack changed while sessions use it
(:meth:`MiddlewareStack.add`, :meth:`~MiddlewareStack.remove`) is recomposed at once in
every one of them, through the callbacks they :meth:`~MiddlewareStack.watch` it with: a
message already inside a stack finishes its way through the old composition, and every
message after the change passes the new one. Nothing is checked per message.

A stack may ``follow`` another: its own middleware come first (outermost), then the
other's, as they are at each composition, and a change to the other reaches whoever
watches this one. The client builds its stacks this way around the user's, so
middleware a user adds to their own :class:`Middlewares` later reaches live clients too.

A middleware that needs its session (state per session, answering a request itself,
rate limits per session) is a :class:`SessionMiddleware`: an object with
``bind(session)``, called once per session as the stack is first composed for it (a
recomposition reuses what it returned, given the session's ``bound`` cache). It returns
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

    def __init__(self, name: str, *, follow: MiddlewareStack | None = None) -> None:
        self.name: Final = name
        self._items: list[Middleware | SessionMiddleware] = []
        #: The stack whose middleware come after this one's own (see the module doc).
        self.follow: Final = follow
        #: Called after every change: the sessions composed from this stack.
        self._watchers: set[Callable[[], None]] = set()

    def add(self, middleware: M) -> M:
        """Append ``middleware`` (innermost of this stack's own so far); sessions using
        the stack are recomposed at once. Usable as a decorator."""
        self._items.append(middleware)
        self._changed()
        return middleware

    def remove(self, middleware: Middleware | SessionMiddleware) -> None:
        """Remove a middleware added earlier; sessions using the stack are recomposed."""
        self._items.remove(middleware)
        self._changed()

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every change of this stack (or the one it follows)."""
        self._watchers.add(callback)
        if self.follow is not None:
            self.follow.watch(callback)

    def unwatch(self, callback: Callable[[], None]) -> None:
        """Stop calling ``callback`` (a session that ended)."""
        self._watchers.discard(callback)
        if self.follow is not None:
            self.follow.unwatch(callback)

    def _changed(self) -> None:
        for callback in list(self._watchers):
            callback()

    def _all(self) -> list[Middleware | SessionMiddleware]:
        if self.follow is None:
            return self._items
        return [*self._items, *self.follow._all()]

    def __iter__(self) -> Iterator[Middleware | SessionMiddleware]:
        return iter(tuple(self._all()))

    def __len__(self) -> int:
        return len(self._all())

    def compose(
        self,
        terminal: Terminal,
        session: object = None,
        bound: dict[int, Middleware | None] | None = None,
    ) -> Terminal:
        """Return one function that runs every middleware, then ``terminal``.

        ``session`` is what each :class:`SessionMiddleware` is bound to; ``bound``, if
        given, keeps what each one's ``bind`` returned (by the item's id), so that a
        recomposition for the same session binds nothing twice.

        Each layer is a plain function that returns its middleware's awaitable, and
        each ``call_next`` a plain function that returns the next layer's: a message
        held up inside the stack (a sender queued on the transport's write lock, a
        thousand of them in a burst) keeps one frame per middleware alive, not three.
        """
        chain = terminal
        for item in reversed(self._all()):
            middleware = _bound(item, session, bound)
            if middleware is not None:
                chain = _layer(middleware, chain)
        return chain

    def __repr__(self) -> str:
        return f"<MiddlewareStack {self.name} ({len(self)} middleware)>"


def _bound(
    item: Middleware | SessionMiddleware,
    session: object,
    cache: dict[int, Middleware | None] | None,
) -> Middleware | None:
    bind = getattr(item, "bind", None)
    if bind is None:
        return item  # type: ignore[return-value]
    if cache is not None and id(item) in cache:
        return cache[id(item)]
    bound: Middleware | None = bind(session)
    if cache is not None:
        cache[id(item)] = bound
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

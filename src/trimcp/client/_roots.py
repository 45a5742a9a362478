"""The client's roots: answering ``roots/list`` and telling the server they changed.

``open_client(roots=...)`` takes a fixed list of :class:`~trimcp.protocol.Root`, or a
handler ``async (ctx) -> Sequence[Root]`` that computes them per request. Either way the
client declares ``roots: {"listChanged": true}``, and :meth:`RootsCalls.set_roots`
replaces the list the client serves and sends ``notifications/roots/list_changed``
(handshake era), after which a server typically calls ``roots/list`` again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, final

import trio

from trimcp.binding import unstructure
from trimcp.dispatch import McpError, Registry
from trimcp.nursery import HandlerContext, Session
from trimcp.protocol import Feature, ListRootsResult, Root, RootsCapability, supports
from trimcp.wire import METHOD_NOT_FOUND

__all__ = ["RootList", "RootsCalls", "RootsHandler", "install_roots", "roots_capability"]

RootsHandler = Callable[[HandlerContext], Awaitable[Sequence[Root]]]


@final
class RootList:
    """The roots one client serves: a list it owns, or a handler's answer."""

    def __init__(self, source: RootsHandler | Sequence[Root]) -> None:
        self.source: RootsHandler | list[Root] = source if callable(source) else list(source)

    async def current(self, ctx: HandlerContext) -> list[Root]:
        source = self.source
        return list(await source(ctx)) if callable(source) else list(source)


def install_roots(
    registry: Registry, given: RootsHandler | Sequence[Root] | None
) -> RootList | None:
    """Answer ``roots/list`` from ``given``; returns the :class:`RootList`."""
    if given is None:
        return None
    roots = RootList(given)

    async def list_roots(ctx: HandlerContext, _params: Any) -> Any:
        return unstructure(ListRootsResult(roots=await roots.current(ctx)))

    registry.add_request("roots/list", list_roots)
    return roots


def roots_capability(roots: RootList | None) -> RootsCapability | None:
    return RootsCapability(list_changed=True) if roots is not None else None


class RootsCalls:
    """Roots calls, mixed into ``Client``."""

    session: Session
    roots: RootList | None

    async def send_roots_list_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``)."""
        version = self.session.state.protocol_version
        if version is not None and supports(version, Feature.ROOTS_LIST_CHANGED):
            await self.session.notify("notifications/roots/list_changed")
        else:
            await trio.lowlevel.checkpoint()  # nothing to send: still a checkpoint

    async def set_roots(self, roots: Sequence[Root]) -> None:
        """Serve ``roots`` from now on and tell the server they changed.

        Raises:
          McpError: the client was opened without roots (it declared no capability).
        """
        if self.roots is None:
            raise McpError(METHOD_NOT_FOUND, "this client was opened without roots")
        self.roots.source = list(roots)
        await self.send_roots_list_changed()

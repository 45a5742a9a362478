"""The resources half of :class:`~trimcp.server.Server`: decorators and ``resources/*``.

``Server`` inherits :class:`ResourceRoutes`, which keeps the registration API
(``@server.resource``, ``@server.resource_template``), update notices, and the request
handlers apart from the tools and lifecycle code. Every handler is installed behind the
server's lifecycle check, like the tools routes.

The ``resources`` capability (``subscribe`` and ``listChanged`` both true) is declared
only when a resource or template is registered, or ``declare_resources`` is set; without
it every ``resources/*`` request is ``-32601``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from trimcp.binding import unstructure
from trimcp.dispatch import McpError, RequestHandler
from trimcp.nursery import HandlerContext, Session
from trimcp.protocol import (
    HANDSHAKE_VERSIONS,
    Annotations,
    Feature,
    Icon,
    ReadResourceParams,
    ResourcesCapability,
    SubscribeParams,
    supports,
)
from trimcp.wire import METHOD_NOT_FOUND

from ._auth import ScopeTable
from ._context import ToolContext
from ._downgrade import fit_annotations, fit_read_result
from ._pagination import page_result, paginate
from ._resources import ResourceRegistry, resource_not_found
from ._shared import SharedServer
from ._skills import SkillRegistry
from ._subscriptions import SubscriptionHub

__all__ = ["ResourceRoutes"]

F = TypeVar("F", bound=Callable[..., Any])

#: Members of resources and templates, and the feature that introduced them.
_GATED_MEMBERS = {
    "title": Feature.TITLES,
    "icons": Feature.ICONS,
    "_meta": Feature.META_ON_TYPES,
}


def _to_wire(item: Any, ctx: HandlerContext) -> dict[str, Any]:
    """``item``'s wire form without the members the negotiated revision lacks."""
    version = ctx.session.protocol_version or HANDSHAKE_VERSIONS[-1]
    full: dict[str, Any] = unstructure(item)
    wire = {
        key: value
        for key, value in full.items()
        if key not in _GATED_MEMBERS or supports(version, _GATED_MEMBERS[key])
    }
    if "annotations" in wire:
        wire["annotations"] = fit_annotations(version, wire["annotations"])
    return wire


class ResourceRoutes:
    """Resource registration and handlers, mixed into ``Server``."""

    resources: ResourceRegistry
    declared_scopes: ScopeTable
    skills: SkillRegistry
    declare_resources: bool
    page_size: int
    subscriptions: SubscriptionHub
    shared: SharedServer | None
    _sessions: set[Session]

    # ------------------------------------------------------------------ registration
    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[F], F]:
        """Register a function (``async def``, or a plain ``def`` run in a worker thread) as
        the static resource ``uri`` (decorator).

        The name defaults to the function's, the description to its docstring. The
        function returns ``str`` (text), ``bytes`` (blob), contents objects, or a list.
        With authorization, ``scopes`` are the OAuth scopes reading it needs.
        """

        def register(fn: F) -> F:
            self.resources.add(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
            self.declared_scopes.declare("resource", uri, scopes)
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[F], F]:
        """Register a function (``async def`` or plain ``def``) serving every URI matching
        ``uri_template``.

        The template's variables are passed as keyword arguments converted to the
        parameters' annotations (``str``, ``int``, ``float``, ``bool``, ``list[str]``).
        With authorization, ``scopes`` are the OAuth scopes reading any of them needs.
        """

        def register(fn: F) -> F:
            self.resources.add_template(
                fn,
                uri_template,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
            self.declared_scopes.declare("resource", uri_template, scopes)
            return fn

        return register

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or template; live sessions get ``list_changed``."""
        self.resources.remove(uri)

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to every session subscribed to ``uri``.

        Synchronous (each session's notification queue sends it; see
        ``trimcp.nursery._notifier``), so it may be called from any code running in the
        server's Trio run. With a shared store, the sessions
        subscribed on any process get it (once each).
        """
        if self.shared is not None:
            self.shared.notify_sessions("notifications/resources/updated", {"uri": uri})
            self.subscriptions.publish("notifications/resources/updated", {"uri": uri})
            return
        for session in self.resources.subscribers(uri):
            if session in self._sessions:
                session.notify_soon("notifications/resources/updated", {"uri": uri})
        self.subscriptions.publish("notifications/resources/updated", {"uri": uri})

    def resources_capability(self) -> ResourcesCapability | None:
        """The ``resources`` capability this server declares, if any."""
        if len(self.resources) or len(self.skills) or self.declare_resources:
            return ResourcesCapability(subscribe=True, list_changed=True)
        return None

    # ------------------------------------------------------------------ handlers
    def resource_routes(self) -> dict[str, tuple[RequestHandler, type[Any] | None]]:
        """The ``resources/*`` methods, their handlers and params types."""
        return {
            "resources/list": (self._list_resources, None),
            "resources/templates/list": (self._list_resource_templates, None),
            "resources/read": (self._read_resource, ReadResourceParams),
            "resources/subscribe": (self._subscribe_resource, SubscribeParams),
            "resources/unsubscribe": (self._unsubscribe_resource, SubscribeParams),
        }

    @staticmethod
    def _require(ctx: HandlerContext) -> None:
        if ctx.session.server_capabilities.resources is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")

    def _page(self, ctx: HandlerContext, params: Any, kind: str, items: list[Any]) -> Any:
        self._require(ctx)
        cursor = params.get("cursor") if isinstance(params, dict) else None
        page, next_cursor = paginate(kind, items, cursor, self.page_size)
        return page, next_cursor

    async def _list_resources(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        listed = [*self.resources.resources(), *self.skills.skill_resources()]
        page, next_cursor = self._page(ctx, params, "resources", listed)
        return page_result("resources", [_to_wire(r, ctx) for r in page], next_cursor)

    async def _list_resource_templates(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        page, next_cursor = self._page(ctx, params, "templates", self.resources.templates())
        return page_result("resourceTemplates", [_to_wire(t, ctx) for t in page], next_cursor)

    async def _read_resource(
        self, ctx: HandlerContext, params: ReadResourceParams
    ) -> dict[str, Any]:
        self._require(ctx)
        result = self.skills.read(params.uri)
        if result is None:
            result = await self.resources.read(ToolContext(ctx), params.uri)
        return fit_read_result(ctx.session.protocol_version, result)

    async def _subscribe_resource(
        self, ctx: HandlerContext, params: SubscribeParams
    ) -> dict[str, Any]:
        self._require(ctx)
        if not self.resources.has(params.uri):
            raise resource_not_found(params.uri)
        self.resources.subscribe(ctx.session_object, params.uri)
        if self.shared is not None:
            await self.shared.subscribe(ctx.session_object, params.uri, True)
        return {}

    async def _unsubscribe_resource(
        self, ctx: HandlerContext, params: SubscribeParams
    ) -> dict[str, Any]:
        self._require(ctx)
        self.resources.unsubscribe(ctx.session_object, params.uri)
        if self.shared is not None:
            await self.shared.subscribe(ctx.session_object, params.uri, False)
        return {}

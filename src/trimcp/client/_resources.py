"""The resources half of :class:`~trimcp.client.Client`: typed ``resources/*`` calls.

``Client`` inherits :class:`ResourceCalls`. Every call checks the server declared the
``resources`` capability (else ``McpError(-32601)`` without a round trip), and
subscribing also needs ``resources.subscribe``. :func:`add_resource_handlers` installs
the ``on_resource_updated`` / ``on_resources_list_changed`` callbacks of
``open_client`` on the client's method table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from trimcp.binding import structure
from trimcp.dispatch import McpError, Registry
from trimcp.nursery import Session
from trimcp.protocol import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceUpdatedParams,
)
from trimcp.wire import METHOD_NOT_FOUND

from ._era import EraState
from ._mrtr import InputRounds
from ._pages import all_pages

__all__ = [
    "ResourceCalls",
    "ResourceUpdatedHandler",
    "ResourcesChangedHandler",
    "add_resource_handlers",
]

ResourceUpdatedHandler = Callable[[ResourceUpdatedParams], Awaitable[None]]
ResourcesChangedHandler = Callable[[], Awaitable[None]]


class ResourceCalls:
    """Typed resource calls, mixed into ``Client``."""

    session: Session
    _rounds: InputRounds
    era: EraState

    def _require_resources(self, *, subscribe: bool = False) -> None:
        if subscribe and self.era.stateless:
            raise McpError(
                METHOD_NOT_FOUND,
                "resources/subscribe does not exist in the stateless era (2026-07-28): use "
                "client.listen(resource_uris=[...]), or open_client(..., era='handshake')",
            )
        capability = self.session.state.server_capabilities.resources
        if capability is None:
            raise McpError(METHOD_NOT_FOUND, "the server does not support resources")
        if subscribe and not capability.subscribe:
            raise McpError(METHOD_NOT_FOUND, "the server does not support resource subscriptions")

    async def _list(self, method: str, cursor: str | None) -> dict[str, Any]:
        self._require_resources()
        params = {"cursor": cursor} if cursor is not None else None
        return await self.session.request(method, params)

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        """One page of resources, starting at ``cursor``."""
        return structure(await self._list("resources/list", cursor), ListResourcesResult)

    async def list_all_resources(self) -> list[Resource]:
        """Every resource, following ``nextCursor`` across all pages."""
        return await all_pages("resources/list", self.list_resources, lambda p: p.resources)

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        """One page of resource templates, starting at ``cursor``."""
        raw = await self._list("resources/templates/list", cursor)
        return structure(raw, ListResourceTemplatesResult)

    async def list_all_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, following ``nextCursor`` across all pages."""
        return await all_pages(
            "resources/templates/list",
            self.list_resource_templates,
            lambda page: page.resource_templates,
        )

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read ``uri``. A URI the server does not serve raises ``McpError`` (-32002)."""
        self._require_resources()
        raw = await self._rounds.request("resources/read", {"uri": uri})
        return structure(raw, ReadResourceResult)

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri``."""
        self._require_resources(subscribe=True)
        await self.session.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the update notices about ``uri``."""
        self._require_resources(subscribe=True)
        await self.session.request("resources/unsubscribe", {"uri": uri})


def add_resource_handlers(
    registry: Registry,
    on_resource_updated: ResourceUpdatedHandler | None,
    on_resources_list_changed: ResourcesChangedHandler | None = None,
) -> None:
    """Route the server's resource notifications to the given callbacks."""
    if on_resource_updated is not None:
        updated = on_resource_updated

        async def resource_updated(_session: Session, params: dict[str, Any] | None) -> None:
            await updated(structure(params or {}, ResourceUpdatedParams))

        registry.add_notification("notifications/resources/updated", resource_updated)
    if on_resources_list_changed is not None:
        changed = on_resources_list_changed

        async def list_changed(_session: Session, _params: dict[str, Any] | None) -> None:
            await changed()

        registry.add_notification("notifications/resources/list_changed", list_changed)

"""Resources: what a server exposes to be read (``resources/*``).

``Resource`` is one concrete URI; ``ResourceTemplate`` describes a family of URIs with an
RFC 6570 template. Reading gives a list of :data:`~trimcp.protocol.ResourceContents`
(text or base64 blob). ``resources/subscribe`` / ``unsubscribe`` and
``notifications/resources/updated`` are handshake-era only.
"""

from __future__ import annotations

from typing import Any, final

import attrs

from ._content import BlobResourceContents, TextResourceContents
from ._metadata import Annotations, Icon

__all__ = [
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ReadResourceParams",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
    "ResourceUpdatedParams",
    "SubscribeParams",
]


@final
@attrs.frozen(kw_only=True)
class Resource:
    """A resource as listed by ``resources/list``; ``size`` is the raw size in bytes."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ResourceTemplate:
    """A family of resources, as listed by ``resources/templates/list`` (RFC 6570)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ListResourcesResult:
    """One page of resources; a missing ``next_cursor`` is the end."""

    resources: list[Resource]
    next_cursor: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ListResourceTemplatesResult:
    """One page of resource templates; a missing ``next_cursor`` is the end."""

    resource_templates: list[ResourceTemplate]
    next_cursor: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ReadResourceParams:
    """``resources/read`` params."""

    uri: str
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ReadResourceResult:
    """The contents of a resource (one or more: a directory may give several)."""

    contents: list[TextResourceContents | BlobResourceContents]
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class SubscribeParams:
    """``resources/subscribe`` and ``resources/unsubscribe`` params."""

    uri: str
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ResourceUpdatedParams:
    """``notifications/resources/updated``: ``uri`` may be a sub-resource of a subscription."""

    uri: str
    meta: dict[str, Any] | None = None

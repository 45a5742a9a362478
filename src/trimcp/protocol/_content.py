"""Content blocks: what tool results, prompt messages and sampling messages carry.

Every block has a ``type`` tag (``text``, ``image``, ``audio``, ``resource_link``,
``resource``) that is fixed per class (``init=False``): it is written on the wire, checked
when read, and is how :data:`ContentBlock` is discriminated. ``audio`` is 2025-03-26+ and
``resource_link`` 2025-06-18+; the server layer decides what to send to older peers.
"""

from __future__ import annotations

from typing import Any, Literal, final

import attrs

from ._metadata import Annotations, Icon

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
]


@final
@attrs.frozen(kw_only=True)
class TextContent:
    """Plain text."""

    type: Literal["text"] = attrs.field(default="text", init=False)
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ImageContent:
    """An image; ``data`` is base64."""

    type: Literal["image"] = attrs.field(default="image", init=False)
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class AudioContent:
    """Audio; ``data`` is base64 (2025-03-26+)."""

    type: Literal["audio"] = attrs.field(default="audio", init=False)
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ResourceLink:
    """A link to a resource the server can read (2025-06-18+); a ``Resource`` plus the tag.

    ``size`` is the raw size in bytes, if known.
    """

    type: Literal["resource_link"] = attrs.field(default="resource_link", init=False)
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
class TextResourceContents:
    """The text of a resource."""

    uri: str
    text: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class BlobResourceContents:
    """The binary contents of a resource; ``blob`` is base64."""

    uri: str
    blob: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


ResourceContents = TextResourceContents | BlobResourceContents
"""Resource contents; told apart by which of ``text`` / ``blob`` is present."""


@final
@attrs.frozen(kw_only=True)
class EmbeddedResource:
    """The contents of a resource, embedded in a message or result."""

    type: Literal["resource"] = attrs.field(default="resource", init=False)
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
"""Any content block, discriminated by ``type``."""

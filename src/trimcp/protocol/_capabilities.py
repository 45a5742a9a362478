"""Client and server capabilities, exchanged by ``initialize`` (handshake era) or carried
per request / by ``server/discover`` (stateless era).

Capability sets are open ("not a closed set"), so every capability object keeps the keys it
does not know in ``extra`` and writes them back: a proxy or a newer peer loses nothing.
An empty capability object (``{}``) means "supported, no options": construct the class with
no arguments. Members that are plain objects in the schema (``logging: {}``) are
``dict[str, Any]``; ``tasks`` (2025-11-25 only) is kept as a raw object because its shape
differs between client and server and was removed from the core protocol afterwards.
"""

from __future__ import annotations

from typing import Any, final

import attrs

from ._common import EXTRA_METADATA

__all__ = [
    "ClientCapabilities",
    "ElicitationCapability",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ToolsCapability",
]


@final
@attrs.frozen(kw_only=True)
class RootsCapability:
    """The client can list roots; ``list_changed``: it notifies on changes (handshake era)."""

    list_changed: bool | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class SamplingCapability:
    """The client can sample an LLM; ``context`` / ``tools`` are 2025-11-25+ sub-features."""

    context: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class ElicitationCapability:
    """The client can elicit input; no modes given (``{}``) means form mode only."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class ClientCapabilities:
    """What a client supports. ``extensions`` is stateless-era only."""

    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: dict[str, Any] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class ToolsCapability:
    """The server offers tools; ``list_changed``: it notifies when the list changes."""

    list_changed: bool | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class PromptsCapability:
    """The server offers prompts; ``list_changed``: it notifies when the list changes."""

    list_changed: bool | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class ResourcesCapability:
    """The server offers resources; ``subscribe`` to updates, ``list_changed`` notices."""

    subscribe: bool | None = None
    list_changed: bool | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)


@final
@attrs.frozen(kw_only=True)
class ServerCapabilities:
    """What a server supports. ``completions`` is 2025-03-26+, ``extensions`` stateless-era."""

    experimental: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: dict[str, Any] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=EXTRA_METADATA)

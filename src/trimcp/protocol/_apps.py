"""MCP Apps, the extension ``io.modelcontextprotocol/ui`` (SEP-1865, stable 2026-01-26).

A server ships an interactive HTML view as a resource with a ``ui://`` URI and the MIME
type ``text/html;profile=mcp-app``; a tool points at it from its ``_meta``:
``{"ui": {"resourceUri": "ui://...", "visibility": ["model", "app"]}}`` (servers built
on the extension's own SDK also write the deprecated flat key ``"ui/resourceUri"``,
which hosts still read). ``visibility`` says who may call the tool: the model, the app
(the view, through its host), or both (the default). The resource's contents may carry
``_meta.ui`` too: ``csp`` (``connectDomains``, ``resourceDomains``, ``frameDomains``,
``baseUriDomains``), ``permissions`` (``camera``, ``microphone``, ``geolocation``,
``clipboardWrite``), ``domain`` and ``prefersBorder``.

Negotiation: a host that renders apps declares
``capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [...]}`` (in
``initialize``, or per request in the stateless era); a server gives a tool its UI
metadata only for a client that listed the app MIME type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "APP_MIME_TYPE",
    "LEGACY_RESOURCE_URI_META",
    "UI_EXTENSION",
    "UI_SCHEME",
    "VISIBILITIES",
    "supports_apps",
    "tool_ui_uri",
    "tool_visibility",
    "ui_client_capability",
]

UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
"""The extension's identifier (under ``capabilities.extensions``)."""
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an app's HTML view."""
UI_SCHEME: Final = "ui://"
LEGACY_RESOURCE_URI_META: Final = "ui/resourceUri"
"""The deprecated flat ``_meta`` key of a tool's view URI."""
VISIBILITIES: Final = ("model", "app")


def ui_client_capability() -> dict[str, Any]:
    """What a host that renders apps declares under the extension."""
    return {"mimeTypes": [APP_MIME_TYPE]}


def supports_apps(extensions: Mapping[str, Any] | None) -> bool:
    """Whether client ``extensions`` declare the app MIME type (the extension's test)."""
    settings = (extensions or {}).get(UI_EXTENSION)
    types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(types, list) and APP_MIME_TYPE in types


def tool_ui_uri(meta: Mapping[str, Any] | None) -> str | None:
    """The view URI a tool's ``_meta`` names (``ui.resourceUri``, else the flat key)."""
    meta = meta or {}
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
    if not isinstance(uri, str):
        uri = meta.get(LEGACY_RESOURCE_URI_META)
    return uri if isinstance(uri, str) else None


def tool_visibility(meta: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Who may call the tool: ``("model", "app")`` unless its ``_meta.ui`` narrows it."""
    ui = (meta or {}).get("ui")
    value = ui.get("visibility") if isinstance(ui, Mapping) else None
    if not isinstance(value, list):
        return VISIBILITIES
    return tuple(v for v in VISIBILITIES if v in value)

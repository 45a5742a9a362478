"""MCP Apps on the server (``io.modelcontextprotocol/ui``): views, tools that point at
them, and what a client that does not render apps sees.

``Server`` inherits :class:`AppRoutes`:

* ``@server.app("ui://...")`` registers an ``async def`` returning the view's HTML as a
  resource with the app MIME type; its contents carry ``_meta.ui`` (CSP domains,
  permissions, ``domain``, ``prefersBorder``) when any is given;
* ``@server.tool(ui="ui://...", visibility=[...])`` gives a tool its view:
  ``_meta.ui.resourceUri`` (and the deprecated flat ``ui/resourceUri``, as the
  extension's own SDK writes it) and, when given, ``_meta.ui.visibility``.

Once either is registered the server declares the extension. Following the extension's
server guidance, ``tools/list`` gives a tool its UI metadata only when the client
declared the app MIME type; for any other client the ``ui`` keys are left out of
``_meta`` and tools visible to the app alone are not listed (their text results stay
the fallback). The views themselves stay readable by anyone.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from trimcp.protocol import (
    APP_MIME_TYPE,
    LEGACY_RESOURCE_URI_META,
    UI_EXTENSION,
    UI_SCHEME,
    VISIBILITIES,
    Icon,
    TextResourceContents,
    supports_apps,
    tool_visibility,
)

from ._context import ToolContext
from ._resources import ResourceRegistry
from ._tools import RegisteredTool

__all__ = ["AppRoutes", "tool_ui_meta"]

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def tool_ui_meta(
    meta: dict[str, Any] | None, ui: str | None, visibility: Sequence[str] | None
) -> dict[str, Any] | None:
    """A tool's ``_meta`` with its view (see the module doc); ``ValueError`` if bad."""
    if ui is None:
        if visibility is not None:
            raise ValueError("visibility needs ui= (the view the tool belongs to)")
        return meta
    if not ui.startswith(UI_SCHEME):
        raise ValueError(f"a tool's view must be a {UI_SCHEME} resource: {ui!r}")
    section: dict[str, Any] = {"resourceUri": ui}
    if visibility is not None:
        chosen = list(dict.fromkeys(visibility))
        if not chosen or any(v not in VISIBILITIES for v in chosen):
            raise ValueError(f"visibility must be a non-empty subset of {VISIBILITIES}")
        section["visibility"] = chosen
    return {**(meta or {}), "ui": section, LEGACY_RESOURCE_URI_META: ui}


def _without_ui(wire: dict[str, Any]) -> dict[str, Any]:
    meta = wire.get("_meta")
    if not isinstance(meta, dict) or not ({"ui", LEGACY_RESOURCE_URI_META} & meta.keys()):
        return wire
    rest = {k: v for k, v in meta.items() if k not in ("ui", LEGACY_RESOURCE_URI_META)}
    stripped = {k: v for k, v in wire.items() if k != "_meta"}
    if rest:
        stripped["_meta"] = rest
    return stripped


class AppRoutes:
    """App registration and the per-client view of tools, mixed into ``Server``."""

    resources: ResourceRegistry
    app_views: set[str]

    def app(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        csp: Mapping[str, Sequence[str]] | None = None,
        permissions: Sequence[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
    ) -> Callable[[F], F]:
        """Register an ``async def`` returning an app's HTML as the view ``uri`` (a
        ``ui://`` URI; decorator). It may take the request's context as its one
        parameter. ``csp`` maps ``connectDomains``/``resourceDomains``/``frameDomains``/
        ``baseUriDomains`` to origins; ``permissions`` names what the view asks for
        (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``)."""
        if not uri.startswith(UI_SCHEME):
            raise ValueError(f"an app view must have a {UI_SCHEME} URI: {uri!r}")
        ui: dict[str, Any] = {}
        if csp:
            ui["csp"] = {key: list(origins) for key, origins in csp.items()}
        if permissions:
            ui["permissions"] = {name: {} for name in permissions}
        if domain is not None:
            ui["domain"] = domain
        if prefers_border is not None:
            ui["prefersBorder"] = prefers_border

        def register(fn: F) -> F:
            wants_context = bool(inspect.signature(fn).parameters)

            async def view(ctx: ToolContext) -> TextResourceContents:
                html = await (fn(ctx) if wants_context else fn())
                if not isinstance(html, str):
                    raise TypeError(f"app view {uri} returned {type(html).__name__}, not str")
                return TextResourceContents(
                    uri=uri, text=html, mime_type=APP_MIME_TYPE, meta={"ui": ui} if ui else None
                )

            self.resources.add(
                view,
                uri,
                name=name or str(getattr(fn, "__name__", uri)),
                title=title,
                description=description if description is not None else inspect.getdoc(fn),
                mime_type=APP_MIME_TYPE,
                icons=icons,
                meta={"ui": ui} if ui else None,
            )
            self.app_views.add(uri)
            return fn

        return register

    def apps_capability(self, tools: Sequence[RegisteredTool]) -> dict[str, dict[str, Any]]:
        """The ``extensions`` entry this server declares for apps (empty: none)."""
        if self.app_views or any(t.tool.meta and "ui" in t.tool.meta for t in tools):
            return {UI_EXTENSION: {}}
        return {}

    @staticmethod
    def tools_for(
        extensions: Mapping[str, Any] | None, tools: Sequence[RegisteredTool]
    ) -> Sequence[RegisteredTool]:
        """The tools a client lists: all of them for a client that renders apps, else
        those the model may call (module doc)."""
        if supports_apps(extensions):
            return tools
        return [t for t in tools if "model" in tool_visibility(t.tool.meta)]

    @staticmethod
    def tool_wire_for(extensions: Mapping[str, Any] | None, wire: dict[str, Any]) -> dict[str, Any]:
        """A listed tool without its UI metadata for a client that does not render apps."""
        return wire if supports_apps(extensions) else _without_ui(wire)

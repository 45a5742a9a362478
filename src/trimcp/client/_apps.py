"""MCP Apps on the client (``io.modelcontextprotocol/ui``): finding and reading a tool's
view.

``open_client(..., apps=True)`` declares the extension with the app MIME type, which is
what makes a server give its tools their UI metadata. ``Client`` inherits
:class:`AppCalls`:

* :meth:`AppCalls.tool_view_uri` (a tool's ``ui://`` view, from ``_meta.ui.resourceUri``
  or the deprecated flat key) and :meth:`AppCalls.model_tools` (the tools a host shows its
  model: those whose ``visibility`` includes ``"model"``);
* :meth:`AppCalls.read_app_view`: read a view by tool or URI, checked to be a ``ui://``
  resource whose contents have the app MIME type, as an :class:`AppView` (its HTML and
  the ``_meta.ui`` a host builds its sandbox from: CSP domains, permissions, domain,
  border preference).

Rendering is the host's business (a sandboxed iframe speaking the extension's
``ui/*`` dialect over ``postMessage``); trimcp hands over the verified document.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, final

import attrs

from trimcp.dispatch import McpError
from trimcp.nursery import Session
from trimcp.protocol import (
    APP_MIME_TYPE,
    UI_SCHEME,
    BlobResourceContents,
    ReadResourceResult,
    TextResourceContents,
    Tool,
    tool_ui_uri,
    tool_visibility,
)
from trimcp.wire import INVALID_PARAMS

__all__ = ["AppCalls", "AppView"]


@final
@attrs.frozen
class AppView:
    """An app's view as read from the server: the HTML and its ``_meta.ui``."""

    uri: str
    html: str
    csp: dict[str, list[str]] = attrs.Factory(dict)
    permissions: tuple[str, ...] = ()
    domain: str | None = None
    prefers_border: bool | None = None


def _view(uri: str, result: ReadResourceResult) -> AppView:
    for item in result.contents:
        if item.uri != uri or item.mime_type != APP_MIME_TYPE:
            continue
        if isinstance(item, TextResourceContents):
            html = item.text
        else:
            assert isinstance(item, BlobResourceContents)
            try:
                html = base64.b64decode(item.blob, validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                raise McpError(INVALID_PARAMS, f"{uri}: the view is not base64 HTML") from None
        ui: Any = (item.meta or {}).get("ui")
        ui = ui if isinstance(ui, dict) else {}
        csp_raw = ui.get("csp") if isinstance(ui.get("csp"), dict) else {}
        csp = {
            k: [o for o in v if isinstance(o, str)]
            for k, v in csp_raw.items()
            if isinstance(v, list)
        }
        permissions = ui.get("permissions") if isinstance(ui.get("permissions"), dict) else {}
        domain, border = ui.get("domain"), ui.get("prefersBorder")
        return AppView(
            uri,
            html,
            {
                k: [o for o in v if isinstance(o, str)]
                for k, v in csp.items()
                if isinstance(v, list)
            },
            tuple(str(name) for name in permissions),
            domain if isinstance(domain, str) else None,
            border if isinstance(border, bool) else None,
        )
    raise McpError(INVALID_PARAMS, f"{uri} has no {APP_MIME_TYPE} contents")


class AppCalls:
    """App helpers, mixed into ``Client``."""

    session: Session

    if TYPE_CHECKING:  # provided by ResourceCalls and Client

        async def read_resource(self, uri: str) -> ReadResourceResult: ...

        async def list_all_tools(self) -> list[Tool]: ...

    @staticmethod
    def tool_view_uri(tool: Tool) -> str | None:
        """The ``ui://`` view ``tool`` points at, if any."""
        return tool_ui_uri(tool.meta)

    @staticmethod
    def model_tools(tools: Sequence[Tool]) -> list[Tool]:
        """The tools a model may see and call (``visibility`` includes ``"model"``)."""
        return [t for t in tools if "model" in tool_visibility(t.meta)]

    async def _view_of(self, tool: Tool | str) -> str:
        if isinstance(tool, str):
            found = [t for t in await self.list_all_tools() if t.name == tool]
            if not found:
                raise McpError(INVALID_PARAMS, f"no tool named {tool!r}")
            tool = found[0]
        uri = self.tool_view_uri(tool)
        if uri is None:
            raise McpError(INVALID_PARAMS, f"tool {tool.name!r} has no app view")
        return uri

    async def read_app_view(self, tool_or_uri: Tool | str) -> AppView:
        """Read a tool's view, or the view at a ``ui://`` URI (a name is looked up with
        ``tools/list``). ``McpError(-32602)`` for a tool without a view, a URI that is
        not ``ui://``, or contents without the app MIME type."""
        if isinstance(tool_or_uri, str) and tool_or_uri.startswith(UI_SCHEME):
            uri = tool_or_uri
        else:
            uri = await self._view_of(tool_or_uri)
        if not uri.startswith(UI_SCHEME):
            raise McpError(INVALID_PARAMS, f"an app view must be a {UI_SCHEME} resource: {uri}")
        return _view(uri, await self.read_resource(uri))

"""Stateless-era (2026-07-28) request headers: ``Mcp-Method``, ``Mcp-Name``, the version.

A stateless-era request names its revision in ``params._meta
["io.modelcontextprotocol/protocolVersion"]``; on HTTP the ``MCP-Protocol-Version``
header must equal it, ``Mcp-Method`` must name the method, and ``Mcp-Name`` must carry
``params.name`` (``tools/call``, ``prompts/get``), ``params.uri`` (``resources/read``)
or ``params.taskId`` (``tasks/*``). A value that is not plain printable ASCII without
surrounding whitespace, or that looks like the encoding itself, goes as
``=?base64?<base64 of its UTF-8>?=``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from trimcp.wire import Message, Request

from ._bounded_table import keep
from ._client_params import ToolHeaderTable
from ._header_values import NAME_PARAM, encode_header_value

__all__ = [
    "VERSION_META",
    "encode_header_value",
    "modern_headers",
    "post_headers",
    "transport_headers",
]

VERSION_META: Final = "io.modelcontextprotocol/protocolVersion"
#: Distinct session header lists kept by :func:`post_headers` (then forgotten at once).
SESSION_HEADERS_KEPT: Final = 64

_session_headers: dict[tuple[object, ...], tuple[tuple[str, str], ...]] = {}


def modern_headers(message: Message) -> tuple[str, list[tuple[str, str]]] | None:
    """``(version, headers)`` for a stateless-era request, else ``None``."""
    if not isinstance(message, Request) or not message.params:
        return None
    meta = message.params.get("_meta")
    version = meta.get(VERSION_META) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        return None
    headers = [("Mcp-Method", message.method)]
    key = NAME_PARAM.get(message.method)
    name = message.params.get(key) if key else None
    if isinstance(name, str):
        headers.append(("Mcp-Name", encode_header_value(name)))
    return version, headers


def transport_headers(
    message: Message | None,
    base: Sequence[tuple[str, str]],
    session_id: str | None,
    protocol_version: str | None,
    tool_headers: ToolHeaderTable,
) -> list[tuple[str, str]]:
    """The headers of one HTTP request that the transport sets itself: ``base``, then a
    stateless-era request's own version (and ``Mcp-Method``, ``Mcp-Name``, a tool's
    ``Mcp-Param-*``) with no session id, or else the session id and the negotiated
    version."""
    out = [("User-Agent", "trimcp"), *base]
    modern = modern_headers(message) if message is not None else None
    if modern is not None:
        version, more = modern
        out.extend([("MCP-Protocol-Version", version), *more])
        if isinstance(message, Request) and message.method == "tools/call" and message.params:
            params = message.params
            out.extend(tool_headers.headers_for(params.get("name"), params.get("arguments")))
    else:
        if session_id is not None:
            out.append(("Mcp-Session-Id", session_id))
        if protocol_version is not None:
            out.append(("MCP-Protocol-Version", protocol_version))
    return out


def post_headers(
    message: Message,
    base: tuple[tuple[str, str], ...],
    session_id: str | None,
    protocol_version: str | None,
    tool_headers: ToolHeaderTable,
) -> Sequence[tuple[str, str]]:
    """:func:`transport_headers` for a POST without hooks, read-only: the headers of a
    request of a session are one tuple shared by every call with the same session and
    version (a parked call keeps them for as long as it waits), at most
    :data:`SESSION_HEADERS_KEPT` of them."""
    if modern_headers(message) is not None:
        return transport_headers(message, base, session_id, protocol_version, tool_headers)
    key = (base, session_id, protocol_version)
    shared = _session_headers.get(key)
    if shared is None:
        made = transport_headers(None, base, session_id, protocol_version, tool_headers)
        shared = keep(_session_headers, key, tuple(made), SESSION_HEADERS_KEPT)
    return shared

"""A stateless-era (2026-07-28) POST: which POSTs are one, and the checks of its headers.

In the stateless era Streamable HTTP is POST only, with no sessions: each POST carries
one request whose ``_meta`` names its version and capabilities, and headers that repeat
parts of the body so intermediaries can route without parsing it (SEP-2243). The
server checks them in the spec's order, refusing with HTTP 400 and a JSON-RPC error:

1. ``_meta`` present with its required keys: else ``-32602``;
2. the ``MCP-Protocol-Version`` header names a supported version: else ``-32022``
   (with ``data.supported`` and ``data.requested``);
3. the header equals ``_meta``'s version, ``Mcp-Method`` equals the method and
   ``Mcp-Name`` the ``name``/``uri`` param (after base64 decoding): else ``-32020``;
4. ``_meta``'s version supported: else ``-32022``.

``Mcp-Param-*`` headers (from ``x-mcp-header`` annotations in a tool's input schema)
need the tool's schema, so the server engine checks them; this module hands them over.

Errors the engine answers with map to statuses by :func:`status_for`: ``-32601`` is 404,
the era's request errors are 400.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from trimcp.protocol import (
    PROTOCOL_VERSION_META,
    STATELESS_VERSIONS,
    MetaProblem,
    is_stateless_request,
    read_request_meta,
)
from trimcp.wire import Message, Request

from ._guards import Headers, HttpError
from ._header_values import NAME_PARAM, decode_header_value

__all__ = ["HEADER_MISMATCH", "check_modern_post", "is_modern_post", "param_headers", "status_for"]

HEADER_MISMATCH: Final = -32020

_STATUS: Final = {
    -32601: 404,
    -32602: 400,
    -32600: 400,
    -32700: 400,
    HEADER_MISMATCH: 400,
    -32021: 400,
    -32022: 400,
}


def status_for(code: int) -> int:
    """The HTTP status of a stateless-era JSON-RPC error answer."""
    return _STATUS.get(code, 200)


def is_modern_post(headers: Headers, messages: Sequence[Message]) -> bool:
    """Whether this POST is of the stateless era: by its version header, or (a client
    that left the header out) by the reserved keys of its request's ``_meta``."""
    version = headers.get("mcp-protocol-version")
    if version is not None:
        return version in STATELESS_VERSIONS or (
            version not in _HANDSHAKE and _looks_modern(messages)
        )
    return _looks_modern(messages)


_HANDSHAKE: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})


def _looks_modern(messages: Sequence[Message]) -> bool:
    return (
        len(messages) == 1
        and isinstance(messages[0], Request)
        and (is_stateless_request(messages[0].params) or messages[0].method == "server/discover")
    )


def _mismatch(request: Request, what: str) -> HttpError:
    return HttpError(400, f"Header mismatch: {what}", code=HEADER_MISMATCH, id=request.id)


def _problem(request: Request, problem: MetaProblem) -> HttpError:
    return HttpError(400, problem.message, code=problem.code, id=request.id, data=problem.data)


def check_modern_post(request: Request, headers: Headers, supported: Sequence[str]) -> None:
    """Refuse a stateless-era request whose ``_meta`` or headers are wrong (module doc)."""
    meta = read_request_meta(request.params, STATELESS_VERSIONS)
    if isinstance(meta, MetaProblem) and meta.code != -32022:
        raise _problem(request, meta)
    header_version = headers.get("mcp-protocol-version")
    if header_version is None:
        raise _mismatch(request, "MCP-Protocol-Version is required")
    if header_version not in supported:
        raise _problem(request, _unsupported(header_version, supported))
    body_version = (request.params or {}).get("_meta", {}).get(PROTOCOL_VERSION_META)
    if header_version != body_version:
        raise _mismatch(request, "MCP-Protocol-Version does not match _meta")
    if body_version not in supported:
        raise _problem(request, _unsupported(str(body_version), supported))
    method = headers.get_all("mcp-method")
    if len(method) != 1 or method[0] != request.method:
        raise _mismatch(request, "Mcp-Method must name the request's method")
    key = NAME_PARAM.get(request.method)
    if key is None:
        return
    expected = (request.params or {}).get(key)
    names = headers.get_all("mcp-name")
    if len(names) != 1:
        raise _mismatch(request, "Mcp-Name is required for " + request.method)
    if decode_header_value(names[0]) != expected:
        raise _mismatch(request, f"Mcp-Name must equal params.{key}")


def _unsupported(requested: str, supported: Sequence[str]) -> MetaProblem:
    return MetaProblem(
        -32022,
        f"Unsupported protocol version: {requested}",
        {"supported": list(supported), "requested": requested},
    )


def param_headers(headers: Headers) -> dict[str, list[str]]:
    """The ``Mcp-Param-*`` headers, by lower-case parameter name, for the engine."""
    out: dict[str, list[str]] = {}
    for name in headers.names():
        if name.startswith("mcp-param-"):
            out[name[len("mcp-param-") :]] = headers.get_all(name)
    return out

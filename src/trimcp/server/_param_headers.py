"""``Mcp-Param-*`` headers (2026-07-28, SEP-2243): checked against a tool call's body.

A tool's input schema may annotate a property with ``"x-mcp-header": "Region"``; a
Streamable HTTP client then mirrors that argument into the header ``Mcp-Param-Region``
so intermediaries can route on it without parsing the body. The body stays the source
of truth, so a server that reads the body MUST refuse a call whose headers disagree
with it: ``-32020 HeaderMismatch`` (HTTP 400) when

* the argument has a value but its header is missing or repeated;
* the header is present but the argument is absent or ``null``;
* the header's value is malformed (bad ``=?base64?...?=`` encoding, control
  characters), or differs from the argument: strings compare exactly after decoding,
  integers numerically, booleans as ``true`` / ``false``.

Only properties reachable from the root through ``properties`` alone count (the spec
forbids annotations under ``items``, combinators or ``$ref``). Header names compare
case-insensitively. This check runs only for stateless-era POSTs, the only requests
that carry these headers; stdio has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

import attrs

from trimcp.dispatch import McpError
from trimcp.transports.http import decode_header_value
from trimcp.wire import HEADER_MISMATCH

__all__ = ["HeaderParam", "check_param_headers", "header_params"]

MAX_DEPTH: Final = 16
"""Bound on how deep the ``properties`` chain is followed (schemas are data)."""

_ABSENT: Final = object()


@final
@attrs.frozen
class HeaderParam:
    """One ``x-mcp-header`` annotation: the header suffix and the argument's path."""

    header: str
    path: tuple[str, ...]


def header_params(schema: Mapping[str, Any] | None) -> list[HeaderParam]:
    """The ``x-mcp-header`` annotations of an input schema, in schema order."""
    found: list[HeaderParam] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, Mapping) or len(path) > MAX_DEPTH:
            return
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            return
        for name, sub in properties.items():
            if not isinstance(sub, Mapping):
                continue
            header = sub.get("x-mcp-header")
            if isinstance(header, str) and header:
                found.append(HeaderParam(header, (*path, str(name))))
            walk(sub, (*path, str(name)))

    walk(schema, ())
    return found


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for step in path:
        if not isinstance(node, Mapping) or step not in node:
            return _ABSENT
        node = node[step]
    return _ABSENT if node is None else node


def _matches(text: str, value: Any) -> bool:
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        try:
            return int(text, 10) == int(value)
        except ValueError:
            return False
    if isinstance(value, str):
        return text == value
    return False  # objects, arrays, fractions: no header can mirror them


def _mismatch(message: str) -> McpError:
    return McpError(HEADER_MISMATCH, f"Header mismatch: {message}")


def check_param_headers(
    schema: Mapping[str, Any] | None, arguments: Any, headers: Mapping[str, list[str]]
) -> None:
    """Refuse (``McpError`` -32020) a call whose ``Mcp-Param-*`` headers disagree with
    its ``arguments``; ``headers`` maps lower-case header suffixes to their values."""
    for param in header_params(schema):
        name = f"Mcp-Param-{param.header}"
        values = headers.get(param.header.lower(), [])
        value = _value_at(arguments, param.path)
        if value is _ABSENT:
            if values:
                raise _mismatch(f"{name} is present but the argument is not")
            continue
        if len(values) != 1:
            raise _mismatch(f"{name} is required exactly once for this argument")
        text = decode_header_value(values[0])
        if text is None:
            raise _mismatch(f"{name} is not a valid header value")
        if not _matches(text, value):
            raise _mismatch(f"{name} does not match the argument")

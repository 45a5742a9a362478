"""``Mcp-Param-*`` headers (2026-07-28): tool arguments mirrored into HTTP headers.

A tool may mark properties of its ``inputSchema`` with ``"x-mcp-header": "<Name>"``;
a client calling it over Streamable HTTP in the stateless era then sends the argument's
value as ``Mcp-Param-<Name>`` (encoded like ``Mcp-Name``: plain when header-safe, else
``=?base64?...?=``), so that gateways can route on it without parsing the body.

The spec's constraints on an annotation, all checked by :func:`header_params`:

* the name is non-empty, an RFC 9110 token (``1*tchar``: no space, colon, control or
  non-ASCII character), and case-insensitively unique within the schema;
* it annotates an ``integer``, ``string`` or ``boolean`` property (not ``number``);
* the property is reachable from the root through ``properties`` keys only (an
  annotation under ``items``, ``anyOf``, ``$defs``, ``if`` ... is invalid).

A tool breaking any of them is invalid as a whole: the client leaves it out of what
``tools/list`` returns (and logs why), so one bad definition does not hide the others.

Values: a string as is, an integer in decimal (within +/-(2**53 - 1)), a boolean as
``true``/``false``; a value that is absent or ``null`` sends no header. A value whose
JSON type does not fit (an object, a fraction) is not mirrored: the server then refuses
the call with ``-32020``, which is the honest outcome.

:class:`ToolHeaderTable` remembers the annotations of the tools listed so far (bounded
by :data:`MAX_TOOLS`, oldest forgotten first) for the HTTP channel to consult on each
``tools/call``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final, final

from ._header_values import encode_header_value

__all__ = [
    "MAX_SAFE_INTEGER",
    "MAX_TOOLS",
    "ParamHeader",
    "ToolHeaderTable",
    "header_params",
    "param_header_values",
]

MAX_TOOLS: Final = 4096
"""Tools whose header annotations a channel remembers (oldest forgotten first)."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""The largest integer a header may carry (JavaScript's safe range)."""

_MAX_DEPTH: Final = 64
_MAX_NODES: Final = 50_000
_TOKEN: Final = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
_KEY: Final = "x-mcp-header"

ParamHeader = tuple[str, tuple[str, ...]]
"""``(header name suffix, property path)`` of one annotated argument."""


def _primitive(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return len(kinds) == 1 and kinds[0] in _PRIMITIVES
    return kind in _PRIMITIVES


def _count_annotations(node: Any, depth: int, budget: list[int]) -> int:
    """How many ``x-mcp-header`` keys occur anywhere under ``node``."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise ValueError("the inputSchema is too large or too deep to check")
    if isinstance(node, dict):
        here = 1 if _KEY in node else 0
        return here + sum(_count_annotations(v, depth + 1, budget) for v in node.values())
    if isinstance(node, list):
        return sum(_count_annotations(v, depth + 1, budget) for v in node)
    return 0


def _reachable(
    schema: Mapping[str, Any], path: tuple[str, ...], out: list[tuple[str, tuple[str, ...], Any]]
) -> None:
    """Collect the annotations found along ``properties`` chains from ``schema``."""
    if len(path) > _MAX_DEPTH:
        raise ValueError("the inputSchema is too deep to check")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for name, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        here = (*path, name)
        if _KEY in sub:
            out.append((name, here, sub))
        _reachable(sub, here, out)


def header_params(input_schema: Any) -> list[ParamHeader] | str:
    """The tool's annotated arguments, or why its annotations make it invalid."""
    if not isinstance(input_schema, dict):
        return []
    try:
        total = _count_annotations(input_schema, 0, [_MAX_NODES])
        if total == 0:
            return []
        found: list[tuple[str, tuple[str, ...], Any]] = []
        if _KEY in input_schema:
            return "x-mcp-header on the schema root"
        _reachable(input_schema, (), found)
    except ValueError as exc:
        return str(exc)
    if len(found) != total:
        return "x-mcp-header outside a chain of `properties` keys"
    seen: set[str] = set()
    params: list[ParamHeader] = []
    for prop, path, sub in found:
        name = sub[_KEY]
        if not isinstance(name, str) or not name:
            return f"property {prop!r}: x-mcp-header must be a non-empty string"
        if not _TOKEN.match(name):
            return f"property {prop!r}: x-mcp-header {name!r} is not an HTTP token"
        if name.lower() in seen:
            return f"property {prop!r}: x-mcp-header {name!r} is not unique"
        seen.add(name.lower())
        if not _primitive(sub):
            return f"property {prop!r}: x-mcp-header needs type string, integer or boolean"
        params.append((name, path))
    return params


def _value_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


def param_header_values(
    params: list[ParamHeader], arguments: Mapping[str, Any] | None
) -> list[tuple[str, str]]:
    """The ``Mcp-Param-*`` headers of one call with ``arguments`` (see the module doc)."""
    headers: list[tuple[str, str]] = []
    for name, path in params:
        value: Any = arguments
        for step in path:
            value = value.get(step) if isinstance(value, Mapping) else None
        text = _value_text(value) if value is not None else None
        if text is not None:
            headers.append((f"Mcp-Param-{name}", encode_header_value(text)))
    return headers


@final
class ToolHeaderTable:
    """The header annotations of the tools a client has listed (bounded; see the doc)."""

    def __init__(self, max_tools: int = MAX_TOOLS) -> None:
        self.max_tools = max_tools
        self._tools: OrderedDict[str, list[ParamHeader]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tools)

    def learn(self, tool: str, input_schema: Any) -> str | None:
        """Remember ``tool``'s annotations; return why it is invalid (then it is forgotten)."""
        params = header_params(input_schema)
        if isinstance(params, str):
            self._tools.pop(tool, None)
            return params
        self._tools[tool] = params
        self._tools.move_to_end(tool)
        while len(self._tools) > self.max_tools:
            self._tools.popitem(last=False)
        return None

    def headers_for(self, tool: Any, arguments: Any) -> list[tuple[str, str]]:
        """The ``Mcp-Param-*`` headers of a ``tools/call`` of ``tool`` (none if unknown)."""
        params = self._tools.get(tool) if isinstance(tool, str) else None
        if not params:
            return []
        return param_header_values(params, arguments if isinstance(arguments, Mapping) else None)

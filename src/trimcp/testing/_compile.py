"""JSON Schema to Hypothesis strategy, for the subset the MCP schemas (and tool schemas) use.

:func:`from_schema` turns a schema node into a strategy of JSON values that validate
against it. Definitions are compiled once per ``(revision, name)`` and cached, and
``$ref`` goes through :func:`hypothesis.strategies.deferred`, so recursive definitions
(content blocks inside results inside content blocks) cost nothing until drawn.

Supported: ``$ref`` (to the same document), ``const``, ``enum``, ``anyOf``/``oneOf``,
``allOf`` (merged), ``type`` (one or a list), ``properties``/``required``,
``additionalProperties``, ``items``/``maxItems``/``minItems``, ``minimum``/``maximum``,
``minLength``/``maxLength`` and the string formats the MCP schemas name. Anything else
(``not``, ``pattern``, ``propertyNames``) narrows what is generated to a plain, safe
form; the public strategies are tested to validate against every shipped revision.
Sizes are kept small on purpose: generation stays fast and messages stay readable.
"""

from __future__ import annotations

import base64
import functools
import string
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from ._schemas import definitions, ref_name

__all__ = ["JSON_VALUES", "from_definition", "from_schema"]

_SCALARS: st.SearchStrategy[Any] = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**31), max_value=2**31)
    | st.text(string.ascii_letters + string.digits + " -_", max_size=8)
)
#: Any small JSON value (null, bool, int, short text, lists and objects of them).
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(string.ascii_lowercase, min_size=1, max_size=5), inner, max_size=3
        )
    ),
    max_leaves=5,
)
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", "x", "hello world", "ünïcødé ✓", "a\nb"]
)
_URIS = st.sampled_from(
    ["file:///tmp/a.txt", "https://example.com/x", "test://static-text", "mem://1", "urn:x:y"]
)
_FORMATS: dict[str, st.SearchStrategy[Any]] = {
    "uri": _URIS,
    "uri-reference": _URIS,
    "iri": _URIS,
    "uri-template": st.sampled_from(["file:///{path}", "test://template/{id}/data"]),
    "byte": st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode("ascii")),
    "date-time": st.sampled_from(["2025-01-01T00:00:00Z", "2026-07-28T12:30:00.5+02:00"]),
    "date": st.sampled_from(["2025-01-01", "2026-07-28"]),
    "email": st.sampled_from(["a@example.com", "x.y@example.org"]),
}

Resolver = Callable[[str], st.SearchStrategy[Any]]


def _merge(nodes: list[Mapping[str, Any]], resolve_node: Callable[[str], Any]) -> dict[str, Any]:
    """Merge ``allOf`` members (refs resolved) into one object schema."""
    merged: dict[str, Any] = {}
    for raw in nodes:
        node = resolve_node(raw["$ref"]) if "$ref" in raw else raw
        if "allOf" in node:
            node = {**node, **_merge(node["allOf"], resolve_node)}
            node.pop("allOf", None)
        for key, value in node.items():
            if key == "properties":
                merged.setdefault("properties", {}).update(value)
            elif key == "required":
                merged["required"] = sorted({*merged.get("required", []), *value})
            else:
                merged.setdefault(key, value)
    return merged


def _number(node: Mapping[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    # Unbounded numbers stay small: a tool told to loop 2**31 times is slow, not wrong.
    low, high = node.get("minimum"), node.get("maximum")
    if integer:
        floor = int(low) if low is not None else min(-1000, int(high or 0))
        return st.integers(
            min_value=floor, max_value=int(high) if high is not None else floor + 2000
        )
    ints = st.integers(
        min_value=int(low) if low is not None else -1000,
        max_value=int(high) if high is not None else 1000,
    )
    return ints | st.floats(
        min_value=low, max_value=high, allow_nan=False, allow_infinity=False, width=32
    )


def _string(node: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    fmt = node.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    if "pattern" in node:
        return st.from_regex(node["pattern"], fullmatch=True).filter(lambda s: len(s) < 64)
    low, high = node.get("minLength", 0), node.get("maxLength")
    text = _TEXT if not low else st.text(string.ascii_letters, min_size=low, max_size=low + 8)
    if high is not None:
        text = text.filter(lambda s: len(s) <= high)
    return text


def _object(node: Mapping[str, Any], compile_: Callable[[Any], Any]) -> st.SearchStrategy[Any]:
    props: Mapping[str, Any] = node.get("properties", {})
    required = set(node.get("required", []))
    if not props:
        extra = node.get("additionalProperties", True)
        if extra is False or "propertyNames" in node:
            return st.just({})
        values = JSON_VALUES if extra is True or extra == {} else compile_(extra)
        return st.dictionaries(
            st.text(string.ascii_lowercase, min_size=1, max_size=6), values, max_size=3
        )
    return st.fixed_dictionaries(
        {k: compile_(v) for k, v in props.items() if k in required},
        optional={k: compile_(v) for k, v in props.items() if k not in required},
    )


def from_schema(  # noqa: C901 - one branch per JSON Schema keyword reads best flat
    node: Any, resolve: Resolver, resolve_node: Callable[[str], Any]
) -> Any:
    """A strategy for ``node``; ``resolve(ref)`` gives the (cached) strategy of a ``$ref``."""

    def compile_(child: Any) -> Any:
        return from_schema(child, resolve, resolve_node)

    if node is True or node == {}:
        return JSON_VALUES
    if not isinstance(node, Mapping):
        return st.nothing()
    if "$ref" in node:
        return resolve(node["$ref"])
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(list(node["enum"]))
    if "allOf" in node:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        merged = _merge([rest, *node["allOf"]], resolve_node)
        options = merged.pop("anyOf", None) or merged.pop("oneOf", None)
        if options:  # distribute: (A and (B or C)) is (A and B) or (A and C)
            return st.one_of([compile_(_merge([merged, o], resolve_node)) for o in options])
        return compile_(merged)
    for key in ("anyOf", "oneOf"):
        if key in node:
            return st.one_of([compile_(option) for option in node[key]])
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of([compile_({**node, "type": one}) for one in kind])
    if kind == "object" or (kind is None and "properties" in node):
        return _object(node, compile_)
    if kind == "array":
        low, high = node.get("minItems", 0), node.get("maxItems", 3)
        return st.lists(compile_(node.get("items", True)), min_size=low, max_size=max(low, high))
    if kind == "string":
        return _string(node)
    if kind in ("integer", "number"):
        return _number(node, kind == "integer")
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return JSON_VALUES


@functools.cache
def from_definition(revision: str, name: str) -> st.SearchStrategy[Any]:
    """A strategy for definition ``name`` of ``revision``, compiled once and cached."""
    defs = definitions(revision)
    if name not in defs:
        raise KeyError(f"{revision} has no definition {name}")

    def resolve(ref: str) -> st.SearchStrategy[Any]:
        target = ref_name(ref)
        return st.deferred(lambda: from_definition(revision, target))

    def resolve_node(ref: str) -> Any:
        return defs[ref_name(ref)]

    strategy: st.SearchStrategy[Any] = from_schema(defs[name], resolve, resolve_node)
    return strategy


def for_tool_schema(input_schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Arguments for a tool from its ``inputSchema`` (local ``#/$defs`` refs resolved)."""
    local = input_schema.get("$defs", input_schema.get("definitions", {}))

    def resolve_node(ref: str) -> Any:
        return local.get(ref_name(ref), {})

    def resolve(ref: str) -> st.SearchStrategy[Any]:
        return st.deferred(lambda: from_schema(resolve_node(ref), resolve, resolve_node))

    strategy: st.SearchStrategy[Any] = from_schema(input_schema, resolve, resolve_node)
    return strategy

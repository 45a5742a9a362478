"""Turning a tool function's return value into a ``CallToolResult`` JSON object.

Decided once per tool from its return annotation (:class:`ResultPlan`), applied per call:

- a :class:`~trimcp.protocol.CallToolResult` is written as it is;
- a ``str`` becomes one text block; a content block, or a non-empty list of blocks, is the
  content; ``None`` is empty content;
- anything else is *structured*: ``structuredContent`` holds its JSON form, and a text
  block holds the same JSON for clients that predate structured output. The handshake era
  requires ``structuredContent`` to be an object, so values that are not objects are
  wrapped as ``{"result": value}``, and the output schema wraps likewise.

An annotation of ``str``, content blocks, ``CallToolResult`` or ``None`` (or none at all)
declares no output schema; neither does one whose values may be content at run time
(``Any``, ``list[Any]``, a union with a content type): a client rejects a result without
the ``structuredContent`` its tool's schema promised. Any other annotation declares one,
generated at bind time, and every value it returns is sent as structured content.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, final

import attrs

from trimcp.protocol import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from ._converter import converter, unstructure
from ._schema import json_schema_for
from ._types import (
    ANY_TYPES,
    NoneType,
    is_pydantic,
    is_record,
    is_union,
    mapping_args,
    sequence_kind,
    strip_annotated,
    union_members,
)

__all__ = ["ResultPlan", "plan_result"]

_BLOCKS: Final = frozenset(
    (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
)
_UNSTRUCTURED: Final = frozenset((str, NoneType, CallToolResult, *_BLOCKS))


def _is_unstructured(tp: Any) -> bool:
    """True for annotations whose values become content, not structured content."""
    if tp in _UNSTRUCTURED or tp is None:
        return True
    if is_union(tp):
        return all(_is_unstructured(m) for m in union_members(tp))
    if sequence_kind(tp) is list:
        args = [strip_annotated(a) for a in getattr(tp, "__args__", ())]
        return bool(args) and _is_unstructured(args[0]) and args[0] not in (str, NoneType)
    return False


def _may_be_content(tp: Any) -> bool:
    """Whether a value of *tp* may be a content block, a list of them, or text: the
    result's shape is then decided at run time, and no output schema can be promised."""
    tp = strip_annotated(tp)
    if tp in ANY_TYPES or _is_unstructured(tp):
        return True
    if is_union(tp):
        return any(_may_be_content(m) for m in union_members(tp) if m is not NoneType)
    if sequence_kind(tp) is list:
        args = [strip_annotated(a) for a in getattr(tp, "__args__", ())]
        return not args or args[0] in ANY_TYPES or _may_be_content(args[0])
    return False


def _is_object(tp: Any) -> bool:
    return is_record(tp) or is_pydantic(tp) or mapping_args(tp) is not None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@final
@attrs.frozen(kw_only=True)
class ResultPlan:
    """How one tool's return values are written (see the module docstring)."""

    output_schema: dict[str, Any] | None
    wrap: bool  # structured values are wrapped as {"result": ...}
    write: Callable[[Any], Any] | None  # the unstructure hook of the annotation, if structured

    def to_wire(self, value: Any) -> dict[str, Any]:
        cls = value.__class__
        if cls is CallToolResult:
            return unstructure(value)  # type: ignore[no-any-return]
        if self.write is not None:  # a structured tool: always structured content
            data = self.write(value)
        elif cls is str:
            return {"content": [{"type": "text", "text": value}]}
        elif value is None:
            return {"content": []}
        elif cls in _BLOCKS:
            return {"content": [unstructure(value)]}
        elif cls is list and all(item.__class__ in _BLOCKS for item in value):
            return {"content": [unstructure(item) for item in value]}
        else:
            data = unstructure(value)
        if self.wrap or data.__class__ is not dict:
            data = {"result": data}
        return {"content": [{"type": "text", "text": _dumps(data)}], "structuredContent": data}


def plan_result(annotation: Any, *, owner: str | None = None) -> ResultPlan:
    """The :class:`ResultPlan` for a return annotation (``ANY_TYPES[0]`` when absent);
    *owner* names the tool in warnings.

    Raises:
        TypeError: a structured annotation has no JSON Schema mapping.
    """
    tp = strip_annotated(annotation)
    if _may_be_content(tp):
        # Wholly or partly content-shaped: written by runtime class, no schema to promise.
        return ResultPlan(output_schema=None, wrap=False, write=None)
    schema = json_schema_for(annotation, mode="serialization", owner=owner)
    wrap = not _is_object(tp)
    if wrap:
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
        if defs:
            schema["$defs"] = defs
    return ResultPlan(output_schema=schema, wrap=wrap, write=converter.get_unstructure_hook(tp))

"""JSON Schema 2020-12 from annotations, in agreement with the strict converter.

The generator reads the same :class:`~trimcp.binding._plan.ObjectPlan` as the converter's
generated hooks, so property names, required members, tags and ``additionalProperties``
match what the converter accepts. One difference is inherent to JSON Schema: its
``integer`` also admits ``1.0``, which the strict converter rejects as an ``int``.

Shapes: ``str``/``int``/``float``/``bool``/``None`` -> ``string``/``integer``/``number``/
``boolean``/``null``; ``list``/``tuple``/``set`` -> ``array`` (``prefixItems`` for fixed
tuples, ``uniqueItems`` for sets); ``dict[str, T]`` -> ``object`` + ``additionalProperties``;
``Literal`` / ``Enum`` -> ``const`` / ``enum``; unions -> ``type: [...]`` when every member
is a bare type, else ``anyOf``; attrs classes -> ``object`` schemas, inlined, except classes
on a reference cycle, which go to ``$defs`` and are referenced with ``$ref``.
"""

from __future__ import annotations

import json
from typing import Any, Final, get_args

import attrs

from ._converter import unstructure
from ._plan import MISSING, FieldPlan, ObjectPlan, plan_for_class
from ._types import (
    ANY_TYPES,
    NoneType,
    annotated_description,
    is_attrs,
    is_enum,
    is_literal,
    is_union,
    mapping_args,
    sequence_kind,
    strip_annotated,
    union_members,
)

__all__ = ["json_schema_for", "object_schema_for_plan"]

_PRIMITIVE_SCHEMAS: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    NoneType: "null",
}
_JSON_TYPE_OF_VALUE: Final[dict[type, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    NoneType: "null",
}


def json_schema_for(tp: Any) -> dict[str, Any]:
    """A JSON Schema (2020-12) for values of *tp* as the converter writes and reads them.

    For an attrs class the result is ``{"type": "object", "properties": {...},
    "required": [...]}`` (``required`` omitted when empty) plus ``$defs`` when the class
    graph is recursive. A fresh dict is returned on every call.

    Raises:
        TypeError: *tp* (or a member type) has no JSON Schema mapping.
    """
    gen = _Generator(_recursive_classes(tp))
    schema = gen.schema(tp, top=True)
    return gen.finish(schema)


def object_schema_for_plan(plan: ObjectPlan) -> dict[str, Any]:
    """The object schema for a synthesised plan (a tool's plain parameters)."""
    roots = [strip_annotated(f.type) for f in plan.fields]
    recursive: set[type] = set()
    for root in roots:
        recursive |= _recursive_classes(root)
    gen = _Generator(recursive)
    return gen.finish(gen.object_schema(plan))


class _Generator:
    def __init__(self, recursive: set[type]) -> None:
        self._recursive = recursive
        self._defs: dict[str, dict[str, Any]] = {}
        self._names: dict[type, str] = {}

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self._defs:
            schema["$defs"] = self._defs
        return schema

    def schema(self, tp: Any, *, top: bool = False) -> dict[str, Any]:
        description = annotated_description(tp)
        tp = strip_annotated(tp)
        result = self._schema(tp, top)
        if description is not None:
            result = {**result, "description": description}
        return result

    def _schema(self, tp: Any, top: bool) -> dict[str, Any]:
        if tp in ANY_TYPES:
            return {}
        if tp in _PRIMITIVE_SCHEMAS:
            return {"type": _PRIMITIVE_SCHEMAS[tp]}
        if is_literal(tp):
            return _enum_schema(list(get_args(tp)))
        if is_enum(tp):
            return _enum_schema([m.value for m in tp])
        if is_union(tp):
            return self._union(union_members(tp))
        if is_attrs(tp):
            if tp in self._recursive and not top:
                return {"$ref": f"#/$defs/{self._define(tp)}"}
            return self.object_schema(plan_for_class(tp))
        kind = sequence_kind(tp)
        if kind is not None:
            return self._sequence(tp, kind)
        args = mapping_args(tp)
        if args is not None:
            return self._mapping(tp, *args)
        raise TypeError(f"no JSON Schema mapping for {tp!r}")

    def _define(self, cls: type) -> str:
        name = self._names.get(cls)
        if name is None:
            name = cls.__name__
            n = 2
            while name in self._defs:
                name, n = f"{cls.__name__}_{n}", n + 1
            self._names[cls] = name
            self._defs[name] = {}  # placeholder: stops the recursion
            self._defs[name] = self.object_schema(plan_for_class(cls))
        return name

    def _union(self, members: tuple[Any, ...]) -> dict[str, Any]:
        schemas = [self.schema(m) for m in members]
        if all(list(s) == ["type"] and isinstance(s["type"], str) for s in schemas):
            return {"type": list(dict.fromkeys(s["type"] for s in schemas))}
        return {"anyOf": schemas}

    def _sequence(self, tp: Any, kind: type) -> dict[str, Any]:
        args = [strip_annotated(a) for a in get_args(tp)]
        result: dict[str, Any] = {"type": "array"}
        if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == [()]:  # tuple[()]
                args = []
            result["prefixItems"] = [self.schema(a) for a in args]
            result["minItems"] = result["maxItems"] = len(args)
            return result
        if args and args[0] not in ANY_TYPES:
            result["items"] = self.schema(args[0])
        if kind in (set, frozenset):
            result["uniqueItems"] = True
        return result

    def _mapping(self, tp: Any, key_tp: Any, value_tp: Any) -> dict[str, Any]:
        result: dict[str, Any] = {"type": "object"}
        if value_tp not in ANY_TYPES:
            result["additionalProperties"] = self.schema(value_tp)
        if key_tp is not str and key_tp not in ANY_TYPES:
            result["propertyNames"] = self.schema(key_tp)
        return result

    def object_schema(self, plan: ObjectPlan) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in plan.fields:
            properties[field.wire] = self._property(field)
            if field.required:
                required.append(field.wire)
        result: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            result["required"] = required
        if plan.forbid_extra:
            result["additionalProperties"] = False
        return result

    def _property(self, field: FieldPlan) -> dict[str, Any]:
        schema = _enum_schema([field.tag]) if field.is_tag else dict(self.schema(field.type))
        if field.description is not None:
            schema["description"] = field.description
        default = _json_default(field)
        if default is not MISSING:
            schema["default"] = default
        return schema


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"const": values[0]} if len(values) == 1 else {"enum": values}
    types = {_JSON_TYPE_OF_VALUE.get(type(v)) for v in values}
    if len(types) == 1 and None not in types:
        result = {"type": types.pop(), **result}
    return result


def _json_default(field: FieldPlan) -> Any:
    default = field.default
    if default is MISSING or default is None or field.is_tag:
        return MISSING  # None means "absent"; ``required`` already says it is optional
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        if default.takes_self:
            return MISSING
        default = default.factory()
    try:
        value = unstructure(default, field.type)
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return MISSING
    return value


def _recursive_classes(root: Any) -> set[type]:
    """The attrs classes reachable from *root* that lie on a reference cycle."""
    recursive: set[type] = set()
    done: set[type] = set()
    stack: list[type] = []

    def visit(tp: Any) -> None:
        tp = strip_annotated(tp)
        if is_attrs(tp):
            if tp in stack:
                recursive.update(stack[stack.index(tp) :])
                return
            if tp in done:
                return
            stack.append(tp)
            for field in plan_for_class(tp).fields:
                visit(field.type)
            stack.pop()
            done.add(tp)
            return
        for arg in get_args(tp):
            if isinstance(arg, type) or get_args(arg):
                visit(arg)

    visit(root)
    return recursive

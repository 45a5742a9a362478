"""JSON Schema 2020-12 from annotations, in agreement with the strict converter.

The generator reads the same :class:`~trimcp.binding._plan.ObjectPlan` as the converter's
generated hooks, so property names, required members, tags and ``additionalProperties``
match what the converter accepts (``integer`` admits ``1.0`` in both).

Shapes: ``str``/``int``/``float``/``bool``/``None`` -> ``string``/``integer``/``number``/
``boolean``/``null``; ``list``/``tuple``/``set`` -> ``array`` (``prefixItems`` for fixed
tuples, ``uniqueItems`` for sets); ``dict[str, T]`` -> ``object`` + ``additionalProperties``;
``Literal`` / ``Enum`` -> ``const`` / ``enum``; unions -> ``type: [...]`` when every member
is a bare type, else ``anyOf``; records (attrs classes, dataclasses, ``TypedDict``) ->
``object`` schemas, inlined, except classes on a reference cycle, which go to ``$defs`` and
are referenced with ``$ref``; pydantic models -> the model's own schema, its ``$defs``
moved to the root; string-carried scalars -> their ``_scalars`` schema.
``Annotated[T, ...]`` adds what its metadata says (``_constraints``: description,
``minimum`` ...); metadata that says nothing usable is reported with an
:class:`~trimcp.binding.IgnoredMetadataWarning` naming the owner.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any, Final, Literal, get_args

import attrs

from ._constraints import IgnoredMetadataWarning, checked_or_bare, read_metadata
from ._converter import unstructure
from ._plan import MISSING, FieldPlan, ObjectPlan, plan_for_class
from ._pydantic import model_schema
from ._scalars import scalar_for
from ._types import (
    ANY_TYPES,
    NoneType,
    is_enum,
    is_literal,
    is_pydantic,
    is_record,
    is_union,
    mapping_args,
    sequence_kind,
    strip_annotated,
)

Mode = Literal["validation", "serialization"]

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


def json_schema_for(
    tp: Any, *, mode: Mode = "validation", owner: str | None = None
) -> dict[str, Any]:
    """A JSON Schema (2020-12) for values of *tp* as the converter writes and reads them.

    For a record class the result is ``{"type": "object", "properties": {...},
    "required": [...]}`` (``required`` omitted when empty) plus ``$defs`` when the class
    graph is recursive or holds pydantic models. *mode* picks a pydantic model's input
    (``"validation"``) or output (``"serialization"``) schema; *owner* names what the
    schema is for in warnings. A fresh dict is returned on every call.

    Raises:
        TypeError: *tp* (or a member type) has no JSON Schema mapping.
    """
    gen = _Generator(_recursive_classes(tp), mode, owner or _name(tp))
    schema = gen.schema(tp, top=True)
    return gen.finish(schema)


def object_schema_for_plan(plan: ObjectPlan, *, mode: Mode = "validation") -> dict[str, Any]:
    """The object schema for a synthesised plan (a tool's plain parameters)."""
    roots = [strip_annotated(f.type) for f in plan.fields]
    recursive: set[type] = set()
    for root in roots:
        recursive |= _recursive_classes(root)
    gen = _Generator(recursive, mode, plan.owner)
    return gen.finish(gen.object_schema(plan))


def _name(tp: Any) -> str:
    return str(getattr(strip_annotated(tp), "__qualname__", tp))


class _Generator:
    def __init__(self, recursive: set[type], mode: Mode, owner: str) -> None:
        self._recursive = recursive
        self._mode = mode
        self._owner = owner
        self._defs: dict[str, dict[str, Any]] = {}
        self._names: dict[type, str] = {}
        self._models: set[type] = set()

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self._defs:
            schema["$defs"] = self._defs
        return schema

    def schema(self, tp: Any, *, top: bool = False) -> dict[str, Any]:
        metadata = read_metadata(tp)
        result = self._schema(strip_annotated(tp), top)
        if metadata.ignored:
            warnings.warn(
                f"{self._owner}: ignored Annotated metadata {', '.join(metadata.ignored)} "
                "(no JSON Schema form, not enforced)",
                IgnoredMetadataWarning,
                stacklevel=2,
            )
        if metadata.schema or metadata.description is not None:
            result = {**result, **metadata.schema}
            if metadata.description is not None:
                result["description"] = metadata.description
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
            return self._union(tuple(checked_or_bare(m) for m in get_args(tp)))
        if is_record(tp):
            if tp in self._recursive and not top:
                return {"$ref": f"#/$defs/{self._define(tp)}"}
            return self.object_schema(plan_for_class(tp))
        if is_pydantic(tp):
            return self._model(tp)
        kind = sequence_kind(tp)
        if kind is not None:
            return self._sequence(tp, kind)
        args = mapping_args(tp)
        if args is not None:
            return self._mapping(tp, *args)
        scalar = scalar_for(tp)
        if scalar is not None:
            return copy.deepcopy(scalar.schema)
        raise TypeError(f"no JSON Schema mapping for {tp!r}")

    def _model(self, cls: type) -> dict[str, Any]:
        schema, defs = model_schema(cls, self._mode)
        for name, definition in defs.items():
            known = self._defs.get(name)
            if known is not None and known != definition:
                raise TypeError(
                    f"{self._owner}: two different schemas are both named {name!r} "
                    "(rename one of the pydantic models)"
                )
            self._defs[name] = definition
        ref = schema.get("$ref")
        if len(schema) == 1 and isinstance(ref, str) and ref.startswith("#/$defs/"):
            # A recursive model is a bare reference: inline it, so the schema of an object
            # parameter or result says "type": "object" itself.
            return dict(self._defs[ref.removeprefix("#/$defs/")])
        return schema

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
        args = list(get_args(tp))
        result: dict[str, Any] = {"type": "array"}
        if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == [()]:  # tuple[()]
                args = []
            result["prefixItems"] = [self.schema(a) for a in args]
            result["minItems"] = result["maxItems"] = len(args)
            return result
        if args and strip_annotated(args[0]) not in ANY_TYPES:
            result["items"] = self.schema(args[0])
        if kind in (set, frozenset):
            result["uniqueItems"] = True
        return result

    def _mapping(self, tp: Any, key_tp: Any, value_tp: Any) -> dict[str, Any]:
        result: dict[str, Any] = {"type": "object"}
        if len(get_args(tp)) == 2:
            value_tp = get_args(tp)[1]  # Annotated kept: its metadata belongs in the schema
        if strip_annotated(value_tp) not in ANY_TYPES:
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
        if is_record(tp):
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

"""Introspection of annotations, shared by the converter hooks and the schema generator.

Everything here runs when a hook or schema is generated, never per value.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import sys
import types
import typing
from typing import Annotated, Any, Final, Literal, NotRequired, Required, get_args, get_origin

import attrs

from ._scalars import scalar_for

__all__ = [
    "JSON_KINDS",
    "describe",
    "is_attrs",
    "is_enum",
    "is_json_native",
    "is_literal",
    "is_pydantic",
    "is_record",
    "is_typeddict",
    "is_union",
    "json_kinds",
    "mapping_args",
    "sequence_kind",
    "strip_annotated",
    "union_members",
]

NoneType: Final = type(None)
JSON_KINDS: Final = (str, int, float, bool, NoneType, list, dict)
"""The Python classes a decoded JSON value can have."""

ANY_TYPES: Final = (Any, object)
PRIMITIVES: Final = (str, int, float, bool, NoneType)

_SEQUENCE_ORIGINS: Final = {
    list: list,
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    tuple: tuple,
    set: set,
    collections.abc.Set: frozenset,
    collections.abc.MutableSet: set,
    frozenset: frozenset,
}
_MAPPING_ORIGINS: Final = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


_WRAPPERS: Final = (Annotated, Required, NotRequired)


def strip_annotated(tp: Any) -> Any:
    """``Annotated[T, ...]`` -> ``T`` (repeatedly, and through the ``Required`` /
    ``NotRequired`` marks of ``TypedDict`` keys); anything else unchanged."""
    while (origin := get_origin(tp)) in _WRAPPERS:
        tp = tp.__origin__ if origin is Annotated else get_args(tp)[0]
    return tp


def is_union(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin is typing.Union or origin is types.UnionType


def union_members(tp: Any) -> tuple[Any, ...]:
    return tuple(strip_annotated(m) for m in get_args(tp))


def is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def is_attrs(tp: Any) -> bool:
    return isinstance(tp, type) and attrs.has(tp)


def is_typeddict(tp: Any) -> bool:
    return typing.is_typeddict(tp)


def is_record(tp: Any) -> bool:
    """An attrs class, a dataclass or a ``TypedDict``: objects whose members trimcp's own
    generated code reads and writes (pydantic models bring their own, see
    :func:`is_pydantic`)."""
    return isinstance(tp, type) and (
        attrs.has(tp) or dataclasses.is_dataclass(tp) or typing.is_typeddict(tp)
    )


def is_pydantic(tp: Any) -> bool:
    """A pydantic model class. pydantic is not a dependency: without it imported, no
    class is one (nothing is imported here to find out)."""
    pydantic = sys.modules.get("pydantic")
    return (
        pydantic is not None
        and isinstance(tp, type)
        and issubclass(tp, pydantic.BaseModel)
        and tp is not pydantic.BaseModel
    )


def sequence_kind(tp: Any) -> type | None:
    """For ``list[T]``, ``Sequence[T]``, ``tuple[...]``, ``set[T]``, ``frozenset[T]`` (bare or
    parametrised): the concrete class a structured value gets; else ``None``."""
    origin = get_origin(tp) or tp
    try:
        return _SEQUENCE_ORIGINS.get(origin)
    except TypeError:  # unhashable origin
        return None


def mapping_args(tp: Any) -> tuple[Any, Any] | None:
    """``(key type, value type)`` for ``dict[K, V]`` / ``Mapping[K, V]`` (bare: Any); else None."""
    origin = get_origin(tp) or tp
    if origin not in _MAPPING_ORIGINS:
        return None
    args = get_args(tp)
    if len(args) == 2:
        return strip_annotated(args[0]), strip_annotated(args[1])
    return Any, Any


def _element_args(tp: Any) -> tuple[Any, ...]:
    return tuple(strip_annotated(a) for a in get_args(tp) if a is not Ellipsis)


def json_kinds(tp: Any) -> frozenset[type] | None:
    """Which JSON value classes a value of type *tp* can be written as; ``None`` = any."""
    tp = strip_annotated(tp)
    if tp in ANY_TYPES:
        return None
    if tp is float or tp is int:  # JSON has one number type: 5.0 is an integer too
        return frozenset((float, int))
    if tp in PRIMITIVES:
        return frozenset((tp,))
    if is_literal(tp):
        return frozenset(type(a) for a in get_args(tp))
    if is_enum(tp):
        return frozenset(type(m.value) for m in tp)
    if is_union(tp):
        kinds: set[type] = set()
        for member in union_members(tp):
            member_kinds = json_kinds(member)
            if member_kinds is None:
                return None
            kinds |= member_kinds
        return frozenset(kinds)
    if is_record(tp) or is_pydantic(tp) or mapping_args(tp) is not None:
        return frozenset((dict,))
    if sequence_kind(tp) is not None:
        return frozenset((list,))
    scalar = scalar_for(tp)
    if scalar is not None:
        return scalar.kinds
    return None


def is_json_native(tp: Any) -> bool:
    """True when a value of *tp* already is its own JSON form (primitives, ``Any``, literals,
    and lists / str-keyed dicts / unions of those), so unstructuring passes it through."""
    tp = strip_annotated(tp)
    if tp in ANY_TYPES or tp in PRIMITIVES or is_literal(tp):
        return True
    if is_union(tp):
        return all(is_json_native(m) for m in union_members(tp))
    # Bare ``list`` / ``dict`` are walked by runtime class (like ``unstructure(obj)``), so
    # they may hold attrs instances; ``list[Any]`` / ``dict[str, Any]`` promise JSON.
    if sequence_kind(tp) is list:
        args = _element_args(tp)
        return bool(args) and all(is_json_native(a) for a in args)
    if mapping_args(tp) is not None:
        args = _element_args(tp)
        return len(args) == 2 and args[0] in (str, *ANY_TYPES) and is_json_native(args[1])
    return False


_NAMES: Final = {str: "str", int: "int", float: "float", bool: "bool", NoneType: "null"}


def describe(tp: Any) -> str:
    """A short name for error messages: ``int``, ``str or null``, ``one of 'a', 'b'``."""
    tp = strip_annotated(tp)
    if tp in _NAMES:
        return _NAMES[tp]
    if is_literal(tp):
        values = get_args(tp)
        if len(values) == 1:
            return repr(values[0])
        return "one of " + ", ".join(repr(v) for v in values)
    if is_enum(tp):
        return "one of " + ", ".join(repr(m.value) for m in tp)
    if is_union(tp):
        return " or ".join(dict.fromkeys(describe(m) for m in union_members(tp)))
    if is_record(tp) or is_pydantic(tp) or mapping_args(tp) is not None:
        return "object"
    if sequence_kind(tp) is not None:
        return "list"
    scalar = scalar_for(tp)
    if scalar is not None:
        return scalar.label
    return getattr(tp, "__name__", repr(tp))

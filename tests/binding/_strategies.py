"""Strategies for the binding tests: values of annotated types, and JSON that is almost
(but not quite) the wire form of such values, to probe schema/converter agreement."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import functools
import pathlib
import types
import typing
import uuid
from typing import Any, Literal, get_args, get_origin

import attrs
from hypothesis import strategies as st

from trimcp.binding._constraints import read_metadata

SCALARS: dict[Any, st.SearchStrategy[Any]] = {
    datetime.datetime: st.datetimes(timezones=st.none() | st.just(datetime.UTC)),
    datetime.date: st.dates(),
    datetime.time: st.times(),
    uuid.UUID: st.uuids(),
    pathlib.PurePosixPath: st.text("abc/", max_size=6).map(pathlib.PurePosixPath),
    decimal.Decimal: st.decimals(allow_nan=False, allow_infinity=False, places=3),
    bytes: st.binary(max_size=6),
}

# Integral floats included: JSON Schema's "integer" admits 1.0, and so does the converter.
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | FLOATS | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)


@functools.cache
def values_of(tp: Any, depth: int = 0) -> st.SearchStrategy[Any]:  # noqa: C901
    """Instances of annotation *tp*; below depth 3 lists are empty (recursive types)."""
    size = 3 if depth < 3 else 0
    origin, args = get_origin(tp), get_args(tp)
    if origin in (typing.Required, typing.NotRequired):
        return values_of(args[0], depth)
    if origin is typing.Annotated:
        metadata = read_metadata(tp)
        base = _constrained(args[0], metadata.schema)
        if base is None:
            base = values_of(args[0], depth)
        return base.filter(lambda v: all(t(v) for t, _ in metadata.checks))
    if tp in SCALARS:
        return SCALARS[tp]
    if tp is Any:
        return JSON
    simple = {
        str: st.text(max_size=5),
        int: st.integers(),
        bool: st.booleans(),
        type(None): st.none(),
    }
    if tp in simple:
        return simple[tp]
    if tp is float:
        return FLOATS | st.integers()
    if origin is Literal:
        return st.sampled_from(args)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if origin in (typing.Union, types.UnionType):
        return st.one_of([values_of(a, depth) for a in args])
    if origin in (list, set, frozenset, dict) and size == 0:
        return st.just(origin())
    if origin is tuple and size == 0 and len(args) == 2 and args[1] is Ellipsis:
        return st.just(())
    if origin is list:
        return st.lists(values_of(args[0], depth), max_size=size)
    if origin in (set, frozenset):
        return st.frozensets(values_of(args[0], depth), max_size=size).map(origin)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(values_of(args[0], depth), max_size=size).map(tuple)
        return st.tuples(*(values_of(a, depth) for a in args))
    if origin is dict:
        return st.dictionaries(st.text(max_size=4), values_of(args[1], depth), max_size=size)
    if typing.is_typeddict(tp):
        from trimcp.binding._plan import plan_for_class

        hints = typing.get_type_hints(tp, include_extras=True)
        required = {f.name for f in plan_for_class(tp).fields if f.required}
        return st.fixed_dictionaries(
            {k: values_of(hints[k], depth + 1) for k in hints if k in required},
            optional={k: values_of(hints[k], depth + 1) for k in hints if k not in required},
        )
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return st.builds(
            tp, **{f.name: values_of(hints[f.name], depth + 1) for f in dataclasses.fields(tp)}
        )
    if attrs.has(tp):
        attrs.resolve_types(tp)
        fields = {
            f.alias: st.deferred(lambda t=f.type: values_of(t, depth + 1))
            for f in attrs.fields(tp)
            if f.init
        }
        return st.builds(tp, **fields)
    raise NotImplementedError(tp)


def _constrained(tp: Any, schema: dict[str, Any]) -> st.SearchStrategy[Any] | None:
    """Values that mostly meet the schema keywords of ``Annotated`` metadata (the checks
    filter the rest), so that filtering seldom rejects."""
    if tp is int:
        step = schema.get("multipleOf", 1)
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.integers(
            None if low is None else -(-low // step), None if high is None else high // step
        ).map(lambda n: n * step)
    if tp is float:
        return st.floats(
            schema.get("exclusiveMinimum", schema.get("minimum")),
            schema.get("exclusiveMaximum", schema.get("maximum")),
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
        )
    if tp is str and "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).filter(
            lambda v: schema.get("minLength", 0) <= len(v) <= schema.get("maxLength", 10**9)
        )
    if get_origin(tp) is list:
        return st.lists(
            values_of(get_args(tp)[0]),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", 3),
        )
    return None


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            paths += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            paths += _paths(v, (*prefix, i))
    return paths


def _replace(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    """A copy of *value* with the member at *path* replaced by *new* (or deleted)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = _replace(value[head], rest, new, delete)
    elif delete and isinstance(copy, dict):
        del copy[head]
    else:
        copy[head] = new
    return copy


@st.composite
def near_misses(draw: st.DrawFn, valid: Any) -> Any:
    """*valid* JSON with up to three random edits: replace, delete or add a member."""
    value = valid
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(_paths(value)))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "add":
            target = value
            for step in path:
                target = target[step]
            if isinstance(target, dict):
                key = draw(st.text(max_size=6))
                value = _replace(value, (*path, key), draw(JSON), delete=False)
            continue
        value = _replace(value, path, draw(JSON), delete=action == "delete" and bool(path))
    return value

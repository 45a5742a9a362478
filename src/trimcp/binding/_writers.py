"""Unstructure hooks for non-object types: everything becomes JSON-ready data.

JSON-native values (primitives, ``Any``, lists / str-keyed dicts of those) pass through by
reference; enums become their value; tuples and sets become lists (sets sorted when their
items allow it, so output is deterministic); unions dispatch on the runtime class.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, get_args, get_origin

import cattrs

from ._types import (
    is_enum,
    is_json_native,
    mapping_args,
    sequence_kind,
    strip_annotated,
    union_members,
)

__all__ = ["Writers"]

Writer = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


class Writers:
    """The unstructure hook factories of one converter."""

    def __init__(self, converter: cattrs.Converter, writer_for: Callable[[Any], Writer]) -> None:
        self._converter = converter
        self._writer_for = writer_for

    def enum(self, tp: Any) -> Writer:
        return lambda member: member.value

    def sequence(self, tp: Any) -> Writer:
        kind = sequence_kind(tp)
        args = [strip_annotated(a) for a in get_args(tp) if a is not Ellipsis]
        if kind is list and is_json_native(tp):
            return _identity
        if kind is tuple and len(args) > 1:
            writers = [self._writer_for(a) for a in args]
            return lambda items: [w(item) for w, item in zip(writers, items, strict=True)]
        write = self._writer_for(args[0]) if args else self._converter.unstructure
        unordered = kind in (set, frozenset)

        def unstructure_sequence(items: Any) -> Any:
            out = [write(item) for item in items]
            if unordered:
                with contextlib.suppress(TypeError):  # unorderable items: keep set order
                    out.sort()
            return out

        return unstructure_sequence

    def mapping(self, tp: Any) -> Writer:
        if is_json_native(tp):
            return _identity
        args = mapping_args(tp)
        assert args is not None
        key_tp, value_tp = args
        bare = not get_args(tp)
        write_value = self._converter.unstructure if bare else self._writer_for(value_tp)
        enum_keys = is_enum(key_tp)

        def unstructure_mapping(mapping: Any) -> Any:
            if enum_keys:
                return {k.value: write_value(v) for k, v in mapping.items()}
            return {k: write_value(v) for k, v in mapping.items()}

        return unstructure_mapping

    def union(self, tp: Any) -> Writer:
        """Dispatch on the runtime class, to the hook of the member that class belongs to
        (so a list in ``Block | list[Block]`` is written as ``list[Block]``)."""
        if is_json_native(tp):
            return _identity
        members = union_members(tp)
        cache: dict[type, Writer] = {}

        def unstructure_union(value: Any) -> Any:
            cls = value.__class__
            hook = cache.get(cls)
            if hook is None:
                hook = cache[cls] = self._writer_for(_member_for(cls, members))
            return hook(value)

        return unstructure_union


def _member_for(cls: type, members: tuple[Any, ...]) -> Any:
    """The union member a value of runtime class *cls* is an instance of (else *cls*)."""
    for member in members:
        if isinstance(member, type) and get_origin(member) is None and issubclass(cls, member):
            return member
        kind = sequence_kind(member)
        if kind is not None and issubclass(cls, (list, tuple, set, frozenset)):
            return member
        if mapping_args(member) is not None and issubclass(cls, dict):
            return member
    return cls

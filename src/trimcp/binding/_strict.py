"""Strict structure hooks: primitives, literals, enums and containers (unions: ``_unions``).

"Strict" means the JSON type must already be right: nothing is ever coerced. ``str``
accepts only ``str``; ``int`` an ``int`` or an integral ``float`` (``5.0`` is an integer to
JSON Schema, so the binding takes it too, as ``5``; never ``bool`` or ``5.5``); ``float``
an ``int`` or a ``float`` (not ``bool``); ``bool`` only ``bool``; lists only JSON arrays;
objects only JSON objects; the string-carried scalars (``_scalars``) only a string that
parses. Each factory runs once per type and returns a closure over everything it
precomputed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, get_args

import cattrs
from cattrs.errors import IterableValidationError

from ._constraints import checked_or_bare, read_metadata
from ._errors import InvalidValue, with_index_note
from ._scalars import scalar_for
from ._types import (
    ANY_TYPES,
    NoneType,
    describe,
    is_enum,
    mapping_args,
    sequence_kind,
    strip_annotated,
)
from ._unions import TagTable

__all__ = ["StrictHooks"]

Hook = Callable[[Any, Any], Any]

_PRIMITIVE_OK: Final[dict[type, tuple[type, ...]]] = {
    str: (str,),
    int: (int,),
    float: (float, int),
    bool: (bool,),
    NoneType: (NoneType,),
}


class StrictHooks:
    """The strict hook factories of one converter.

    *hook_for(tp)* returns the hook to use for a member type, late-bound when *tp* refers
    to a class whose hooks are being generated (recursive types); *tag_table(tp)* is
    :meth:`._unions.UnionHooks.tag_table` (a list of content blocks picks each block's
    hook itself).
    """

    def __init__(
        self,
        converter: cattrs.Converter,
        hook_for: Callable[[Any], Hook],
        tag_table: Callable[[Any], TagTable | None],
    ) -> None:
        self._converter = converter
        self._hook_for = hook_for
        self._tag_table = tag_table

    # -- primitives ---------------------------------------------------------------------

    def primitive(self, base: type) -> Hook:
        """Hook for exactly *base*; registered by class, so it also receives subclasses of
        *base* (``bool`` for ``int`` is registered separately; ``StrEnum`` members go to the
        enum hook)."""
        ok = _PRIMITIVE_OK[base]
        message = f"expected {describe(base)}"
        enum_hook = self.enum

        def structure_primitive(value: Any, tp: Any) -> Any:
            if tp is base or tp is None:
                if value.__class__ in ok:
                    return value
                if base is int and value.__class__ is float and value.is_integer():
                    return int(value)
                raise InvalidValue(message)
            if is_enum(tp):
                return enum_hook(tp)(value, tp)
            return tp(structure_primitive(value, base))

        return structure_primitive

    def literal(self, tp: Any) -> Hook:
        allowed = frozenset((type(v), v) for v in get_args(tp))
        message = f"expected {describe(tp)}"

        def structure_literal(value: Any, _: Any) -> Any:
            try:
                hit = (value.__class__, value) in allowed
            except TypeError:  # unhashable JSON value (list, dict)
                hit = False
            if hit:
                return value
            whole = _integral(value)
            if whole is not value and (int, whole) in allowed:
                return whole
            raise InvalidValue(message)

        return structure_literal

    def enum(self, tp: Any) -> Hook:
        table = {(type(m.value), m.value): m for m in tp}
        message = f"expected {describe(tp)}"

        def structure_enum(value: Any, _: Any) -> Any:
            try:
                return table[(value.__class__, value)]
            except (KeyError, TypeError):
                whole = _integral(value)
                if whole is not value and (int, whole) in table:
                    return table[(int, whole)]
                raise InvalidValue(message) from None

        return structure_enum

    def scalar(self, tp: Any) -> Hook:
        """Hook for a string-carried scalar (``_scalars``): the JSON type, then the parse."""
        scalar = scalar_for(tp)
        assert scalar is not None
        kinds, parse = scalar.kinds, scalar.parse
        message = f"expected {scalar.label}"

        def structure_scalar(value: Any, _: Any) -> Any:
            if value.__class__ not in kinds:
                raise InvalidValue(message)
            try:
                return parse(value)
            except (ValueError, TypeError, ArithmeticError):
                raise InvalidValue(message) from None

        return structure_scalar

    def path(self, value: Any, tp: Any) -> Any:
        """The class hook of ``PurePath``: builds the subclass asked for."""
        if value.__class__ is not str:
            raise InvalidValue("expected path string")
        return tp(value)

    def checked(self, tp: Any) -> Hook:
        """Hook for ``Annotated[T, ...]``: structure as ``T``, then run the checks its
        metadata declares (``_constraints``)."""
        inner = strip_annotated(tp)
        hook = self._hook_for(inner)
        checks = read_metadata(tp).checks
        if not checks:
            return lambda value, _: hook(value, inner)

        def structure_checked(value: Any, _: Any) -> Any:
            result = hook(value, inner)
            for test, message in checks:
                if not test(result):
                    raise InvalidValue(message)
            return result

        return structure_checked

    # -- containers ---------------------------------------------------------------------

    def sequence(self, tp: Any) -> Hook:
        kind = sequence_kind(tp)
        assert kind is not None
        args = tuple(checked_or_bare(a) for a in get_args(tp))
        if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return self._fixed_tuple(args)
        elem = args[0] if args else Any
        general = self._homogeneous(kind, elem)
        tagged = self._tag_table(elem)
        return general if tagged is None else _tagged_sequence(tagged, general, kind)

    def _homogeneous(self, kind: type, elem: Any) -> Hook:
        # A list is kept as built: no finishing call (most sequences are lists).
        finish = None if kind is list else _finisher(kind)
        if elem in ANY_TYPES:

            def structure_any_sequence(value: Any, _: Any) -> Any:
                if value.__class__ is not list:
                    raise InvalidValue("expected list")
                return value if finish is None else finish(value)

            return structure_any_sequence
        ok = _PRIMITIVE_OK.get(elem) if isinstance(elem, type) else None
        hook = self._hook_for(elem)

        def structure_sequence(value: Any, _: Any) -> Any:
            if value.__class__ is not list:
                raise InvalidValue("expected list")
            if ok is not None:
                for item in value:
                    if item.__class__ not in ok:
                        break
                else:
                    return value if finish is None else finish(value)
            out = []
            errors: list[Exception] = []
            for i, item in enumerate(value):
                try:
                    out.append(hook(item, elem))
                except Exception as exc:
                    errors.append(with_index_note(exc, i, elem))
            if errors:
                raise IterableValidationError("While structuring a list", errors, kind)
            return out if finish is None else finish(out)

        return structure_sequence

    def _fixed_tuple(self, args: tuple[Any, ...]) -> Hook:
        hooks = [(self._hook_for(a), a) for a in args]
        message = f"expected list of {len(args)} items"

        def structure_tuple(value: Any, _: Any) -> Any:
            if value.__class__ is not list or len(value) != len(hooks):
                raise InvalidValue(message)
            out = []
            errors: list[Exception] = []
            for i, (item, (hook, tp)) in enumerate(zip(value, hooks, strict=True)):
                try:
                    out.append(hook(item, tp))
                except Exception as exc:
                    errors.append(with_index_note(exc, i, tp))
            if errors:
                raise IterableValidationError("While structuring a tuple", errors, tuple)
            return tuple(out)

        return structure_tuple

    def mapping(self, tp: Any) -> Hook:
        args = mapping_args(tp)
        assert args is not None
        key_tp, value_tp = args
        if len(get_args(tp)) == 2:
            value_tp = checked_or_bare(get_args(tp)[1])
        str_keys = key_tp is str or key_tp in ANY_TYPES
        key_hook = None if str_keys else self._hook_for(key_tp)
        any_values = value_tp in ANY_TYPES
        ok = _PRIMITIVE_OK.get(value_tp) if isinstance(value_tp, type) else None
        value_hook = None if any_values else self._hook_for(value_tp)

        def structure_mapping(value: Any, _: Any) -> Any:
            if value.__class__ is not dict:
                raise InvalidValue("expected object")
            if str_keys and (any_values or ok is not None):
                for k, item in value.items():
                    if k.__class__ is not str or not (any_values or item.__class__ in ok):  # type: ignore[operator]
                        break
                else:
                    return value
            out = {}
            errors: list[Exception] = []
            for k, item in value.items():
                try:
                    if key_hook is not None:
                        k = key_hook(k, key_tp)
                    elif k.__class__ is not str:
                        raise InvalidValue("expected str key")
                    out[k] = item if value_hook is None else value_hook(item, value_tp)
                except Exception as exc:
                    errors.append(with_index_note(exc, str(k), value_tp))
            if errors:
                raise IterableValidationError("While structuring an object", errors, dict)
            return out

        return structure_mapping


def _integral(value: Any) -> Any:
    """An integral float as the int it equals (JSON Schema: ``1.0`` is the integer 1)."""
    if value.__class__ is float and value.is_integer():
        return int(value)
    return value


def _finisher(kind: type) -> Callable[[list[Any]], Any]:
    """What turns the structured items into ``kind`` (not a list: that one is kept)."""
    if kind is tuple:
        return tuple
    message = "expected unique items"

    def finish_set(items: list[Any]) -> Any:
        try:
            result = kind(items)
        except TypeError:
            raise InvalidValue("expected hashable items") from None
        if len(result) != len(items):
            raise InvalidValue(message)
        return result

    return finish_set


def _tagged_sequence(tagged: TagTable, general: Hook, kind: type) -> Hook:
    """The hook of a sequence of a tagged union (content blocks): each item's member is
    found by its tag here and its hook called directly, a call fewer per item than
    through the union's hook, which would pick the same member and call the same hook.
    Anything else (not a list, an item that is not an object or whose tag is not a
    known string, an item that fails) goes to ``general``, the sequence hook over the
    union: it gives the same result, and reports a failure with the item's index."""
    key, table = tagged
    finish = None if kind is list else _finisher(kind)

    def structure_tagged_sequence(value: Any, tp: Any) -> Any:
        if value.__class__ is list:
            out = []
            for item in value:
                if item.__class__ is not dict:
                    break
                tag = item.get(key)
                chosen = table.get(tag) if tag.__class__ is str else None
                if chosen is None:
                    break
                try:
                    out.append(chosen[1](item, chosen[0]))
                except Exception:
                    break
            else:
                return out if finish is None else finish(out)
        return general(value, tp)

    return structure_tagged_sequence

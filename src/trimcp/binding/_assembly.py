"""Building an attrs object by writing its slots, where that is what its ``__init__`` does.

A generated structure function (:mod:`._codegen`) has every member in hand once the input
is checked. Calling the class with them as keywords costs a dict, a keyword call and, for
a frozen class, ``object.__setattr__`` looked up by name per attribute; writing each slot
through its member descriptor does the same work in about half the time. That is only the
same work when attrs' generated ``__init__`` does nothing else, so :func:`slot_writers`
answers ``None`` (and the caller keeps calling the class) unless every condition holds:

* the class is a slotted attrs class whose ``__init__`` and ``__new__`` are attrs' and
  ``object``'s, with no ``__attrs_pre_init__`` or ``__attrs_post_init__``;
* its ``__setattr__`` is ``object``'s or attrs' frozen refusal (the init bypasses it);
* no attribute has a validator, a converter, or a default factory that takes ``self``;
* the class's slots are its attributes and nothing else (attrs' cached hash, say, is a
  slot its ``__init__`` also sets).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Final, final

import attrs

__all__ = ["NO_DEFAULT", "SlotWriter", "slot_writers"]

#: No default: the attribute is required, or (``init=False`` without a default) never set.
NO_DEFAULT: Final = attrs.NOTHING


@final
@attrs.frozen
class SlotWriter:
    """How one attribute is set: ``write(obj, value)``; ``default`` is the value used when
    the input has none (an ``attrs.Factory`` is called per object; :data:`NO_DEFAULT`
    means there is none)."""

    attribute: str
    write: Callable[[object, object], None]
    default: Any
    init: bool


def _generated_by_attrs(function: object) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and code.co_filename.startswith("<attrs generated")


def _frozen_refusal(setattr_: object) -> bool:
    return getattr(setattr_, "__module__", None) == "attr._make" and (
        getattr(setattr_, "__name__", None) == "_frozen_setattrs"
    )


def _member(cls: type, name: str) -> types.MemberDescriptorType | None:
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            return found if isinstance(found, types.MemberDescriptorType) else None
    return None


def _slots(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        declared = klass.__dict__.get("__slots__", ())
        names.update((declared,) if isinstance(declared, str) else declared)
    return names


def slot_writers(cls: type) -> tuple[SlotWriter, ...] | None:
    """One :class:`SlotWriter` per attribute of *cls*, in declaration order, or ``None``
    when its ``__init__`` does more than set each attribute (see the module docstring)."""
    if not attrs.has(cls) or "__slots__" not in cls.__dict__:
        return None
    if not _generated_by_attrs(cls.__init__) or cls.__new__ is not object.__new__:
        return None
    if hasattr(cls, "__attrs_pre_init__") or hasattr(cls, "__attrs_post_init__"):
        return None
    if cls.__setattr__ is not object.__setattr__ and not _frozen_refusal(cls.__setattr__):
        return None
    fields = attrs.fields(cls)
    if _slots(cls) - {"__weakref__"} != {field.name for field in fields}:
        return None
    writers: list[SlotWriter] = []
    for field in fields:
        default = field.default
        if field.validator is not None or field.converter is not None:
            return None
        if isinstance(default, attrs.Factory) and default.takes_self:  # type: ignore[arg-type]
            return None
        member = _member(cls, field.name)
        if member is None:
            return None
        writers.append(SlotWriter(field.name, member.__set__, default, field.init))
    return tuple(writers)

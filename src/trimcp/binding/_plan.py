"""The wire plan of an object type: which keys, which types, which are required.

One :class:`ObjectPlan` per attrs class (cached), or one per tool signature. Both the
converter's generated hooks and the JSON Schema generator read the same plan, which is
what keeps "the schema says valid" and "the converter accepts" in agreement.

Naming rule (the one place it lives): the wire name of a field is
``metadata[WIRE_NAME]`` if given, else ``_meta`` for ``meta``, else the camelCase form of
the attribute name with one trailing underscore dropped (``type_`` -> ``type``).
"""

from __future__ import annotations

import enum
import functools
from typing import Any, Final, final, get_args

import attrs

from trimcp.protocol import DESCRIPTION, EXTRA_KEYS, WIRE_NAME

from ._types import annotated_description, is_literal, strip_annotated

__all__ = [
    "FORBID_EXTRA",
    "MISSING",
    "PLAN_CACHE_SIZE",
    "FieldPlan",
    "ObjectPlan",
    "plan_for_class",
    "wire_name",
]

PLAN_CACHE_SIZE: Final = 1024
"""Classes whose plans are kept (least recently used dropped first): a program that
makes attrs classes at run time (one per schema it meets, say) must not grow the cache
without bound. A plan dropped is simply made again when next needed."""

FORBID_EXTRA: Final = "__trimcp_forbid_extra__"
"""Class attribute: set it truthy to reject unknown keys instead of ignoring them."""


class _Missing(enum.Enum):
    MISSING = "MISSING"


MISSING: Final = _Missing.MISSING
"""Sentinel: no default / no tag / key absent (distinct from every JSON value)."""


def wire_name(name: str) -> str:
    """The camelCase wire name of a snake_case attribute or parameter name."""
    if name == "meta":
        return "_meta"
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@final
@attrs.frozen(kw_only=True)
class FieldPlan:
    """One member of an object on the wire."""

    name: str  # the keyword used to construct the object / call the function
    attribute: str  # the attribute read when writing (== name except for _private fields)
    wire: str  # the JSON key
    type: Any  # the annotation, Annotated kept (for descriptions)
    required: bool
    default: Any = MISSING  # the default value or attrs.Factory; MISSING when required
    omit_none: bool = False  # default is None: a None value is left out when writing
    tag: Any = MISSING  # a tag's fixed value (fields with init=False and a 1-value Literal)
    description: str | None = None

    @property
    def is_tag(self) -> bool:
        return self.tag is not MISSING


@final
@attrs.frozen(kw_only=True)
class ObjectPlan:
    """All members of an object type, in declaration order."""

    owner: str  # for messages
    fields: tuple[FieldPlan, ...]
    extra_field: str | None = None  # attribute collecting unknown keys
    forbid_extra: bool = False

    @property
    def known_keys(self) -> frozenset[str]:
        return frozenset(f.wire for f in self.fields)

    @property
    def tags(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if f.is_tag)


def _tag_value(field: attrs.Attribute[Any]) -> Any:
    tp = strip_annotated(field.type)
    if not field.init and is_literal(tp):
        values = get_args(tp)
        if len(values) == 1 and field.default == values[0]:
            return values[0]
    return MISSING


@functools.lru_cache(maxsize=PLAN_CACHE_SIZE)
def plan_for_class(cls: type) -> ObjectPlan:
    """The plan of an attrs class (types resolved once; the last
    :data:`PLAN_CACHE_SIZE` classes' plans are cached).

    Raises:
        TypeError: an annotation cannot be resolved.
    """
    try:
        attrs.resolve_types(cls, include_extras=True)
    except NameError as exc:
        raise TypeError(f"cannot resolve the annotations of {cls.__qualname__}: {exc}") from exc
    fields: list[FieldPlan] = []
    extra_field: str | None = None
    for field in attrs.fields(cls):
        if field.metadata.get(EXTRA_KEYS):
            if field.alias != field.name:
                raise TypeError(
                    f"{cls.__qualname__}.{field.name}: extra-keys field needs a public name"
                )
            extra_field = field.name
            continue
        tag = _tag_value(field)
        if not field.init and tag is MISSING:
            continue  # derived attribute: not on the wire
        has_default = field.default is not attrs.NOTHING
        fields.append(
            FieldPlan(
                name=field.alias if field.init else field.name,
                attribute=field.name,
                wire=field.metadata.get(WIRE_NAME) or wire_name(field.name),
                type=field.type,
                required=tag is not MISSING or not has_default,
                default=field.default if has_default else MISSING,
                omit_none=field.default is None,
                tag=tag,
                description=field.metadata.get(DESCRIPTION) or annotated_description(field.type),
            )
        )
    return ObjectPlan(
        owner=cls.__qualname__,
        fields=tuple(fields),
        extra_field=extra_field,
        forbid_extra=bool(getattr(cls, FORBID_EXTRA, False)),
    )

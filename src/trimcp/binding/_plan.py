"""The wire plan of an object type: which keys, which types, which are required.

One :class:`ObjectPlan` per record class (attrs class, dataclass or ``TypedDict``;
cached), or one per tool signature. Both the converter's generated hooks and the JSON
Schema generator read the same plan, which is what keeps "the schema says valid" and
"the converter accepts" in agreement.

Naming rule (the one place it lives). The MCP vocabulary, the classes of trimcp's own
modules, is camelCase on the wire as the spec spells it: the wire name of a field is
``metadata[WIRE_NAME]`` if given, else ``_meta`` for ``meta``, else the camelCase form of
the attribute name with one trailing underscore dropped (``type_`` -> ``type``). Every
other class (a user's) keeps its Python names: ``metadata[WIRE_NAME]`` if given, else the
attrs ``alias`` (the field name, unless an explicit ``alias=`` or a leading underscore
changed it), else the field or key name. A class can pick either rule with a class
attribute ``__trimcp_camel_case__ = True`` / ``False``.

Unknown keys: the MCP vocabulary ignores them (forward compatibility); a user's class
refuses them (its schema says ``additionalProperties: false``). A class attribute
``__trimcp_forbid_extra__`` overrides either default.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import typing
from typing import Any, Final, final, get_args

import attrs

from trimcp.protocol import DESCRIPTION, EXTRA_KEYS, WIRE_NAME

from ._constraints import read_metadata
from ._docstrings import param_docs
from ._types import is_literal, strip_annotated

__all__ = [
    "CAMEL_CASE",
    "FORBID_EXTRA",
    "MISSING",
    "PLAN_CACHE_SIZE",
    "FieldPlan",
    "ObjectPlan",
    "is_vocabulary",
    "plan_for_class",
    "wire_name",
]

PLAN_CACHE_SIZE: Final = 1024
"""Classes whose plans are kept (least recently used dropped first): a program that
makes attrs classes at run time (one per schema it meets, say) must not grow the cache
without bound. A plan dropped is simply made again when next needed."""

FORBID_EXTRA: Final = "__trimcp_forbid_extra__"
"""Class attribute: truthy to reject unknown keys, falsy to ignore them (see the module
doc for the defaults)."""
CAMEL_CASE: Final = "__trimcp_camel_case__"
"""Class attribute: truthy for camelCase wire names, falsy for Python names."""


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
    #: Members are read as ``obj[key]`` (a ``TypedDict``), not as attributes; a key
    #: that is not required may be absent.
    keyed: bool = False

    @property
    def known_keys(self) -> frozenset[str]:
        return frozenset(f.wire for f in self.fields)

    @property
    def tags(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if f.is_tag)


def is_vocabulary(cls: type) -> bool:
    """Whether *cls* follows the MCP vocabulary's rules (camelCase, unknown keys ignored):
    the classes of trimcp's own modules, or any class that says so (:data:`CAMEL_CASE`)."""
    explicit = getattr(cls, CAMEL_CASE, None)
    if explicit is not None:
        return bool(explicit)
    module = getattr(cls, "__module__", "") or ""
    return module == "trimcp" or module.startswith("trimcp.")


def _tag_value(field: attrs.Attribute[Any]) -> Any:
    tp = strip_annotated(field.type)
    if not field.init and is_literal(tp):
        values = get_args(tp)
        if len(values) == 1 and field.default == values[0]:
            return values[0]
    return MISSING


def _resolve_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot resolve the annotations of {cls.__qualname__}: {exc}") from exc


@functools.lru_cache(maxsize=PLAN_CACHE_SIZE)
def plan_for_class(cls: type) -> ObjectPlan:
    """The plan of an attrs class, a dataclass or a ``TypedDict`` (types resolved once;
    the last :data:`PLAN_CACHE_SIZE` classes' plans are cached).

    Raises:
        TypeError: an annotation cannot be resolved.
    """
    camel = is_vocabulary(cls)
    docs = param_docs(inspect.getdoc(cls)) if not camel else {}
    if attrs.has(cls):
        fields, extra_field = _attrs_fields(cls, camel, docs)
    elif dataclasses.is_dataclass(cls):
        fields, extra_field = _dataclass_fields(cls, docs), None
    else:
        fields, extra_field = _typeddict_fields(cls, docs), None
    forbid = getattr(cls, FORBID_EXTRA, None)
    return ObjectPlan(
        owner=cls.__qualname__,
        fields=tuple(fields),
        extra_field=extra_field,
        forbid_extra=(not camel) if forbid is None else bool(forbid),
        keyed=typing.is_typeddict(cls),
    )


def _attrs_fields(
    cls: type, camel: bool, docs: dict[str, str]
) -> tuple[list[FieldPlan], str | None]:
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
        wire = field.metadata.get(WIRE_NAME) or (
            wire_name(field.name) if camel else (field.alias if field.init else field.name)
        )
        fields.append(
            FieldPlan(
                name=field.alias if field.init else field.name,
                attribute=field.name,
                wire=wire,
                type=field.type,
                required=tag is not MISSING or not has_default,
                default=field.default if has_default else MISSING,
                omit_none=field.default is None,
                tag=tag,
                description=field.metadata.get(DESCRIPTION)
                or read_metadata(field.type).description
                or docs.get(field.name),
            )
        )
    return fields, extra_field


def _dataclass_fields(cls: type, docs: dict[str, str]) -> list[FieldPlan]:
    hints = _resolve_hints(cls)
    fields: list[FieldPlan] = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            default: Any = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = attrs.Factory(field.default_factory)
        else:
            default = MISSING
        tp = hints[field.name]
        fields.append(
            FieldPlan(
                name=field.name,
                attribute=field.name,
                wire=field.metadata.get(WIRE_NAME) or field.name,
                type=tp,
                required=default is MISSING,
                default=default,
                omit_none=default is None,
                description=field.metadata.get(DESCRIPTION)
                or read_metadata(tp).description
                or docs.get(field.name),
            )
        )
    return fields


def _typeddict_fields(cls: type, docs: dict[str, str]) -> list[FieldPlan]:
    hints = _resolve_hints(cls)
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    return [
        FieldPlan(
            name=key,
            attribute=key,
            wire=key,
            type=tp,
            required=_key_required(tp, key in required_keys),
            description=read_metadata(tp).description or docs.get(key),
        )
        for key, tp in hints.items()
    ]


def _key_required(tp: Any, default: bool) -> bool:
    """A ``Required[...]`` / ``NotRequired[...]`` mark wins over the class's ``total``
    (read here because string annotations hide the marks from ``__required_keys__``)."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.NotRequired:
            return False
        if origin is typing.Required:
            return True
        if origin is not typing.Annotated:
            return default
        tp = tp.__origin__

"""What ``Annotated[T, ...]`` metadata says about a value: description, schema keywords
and the checks that enforce them.

Understood, without importing either library (they are optional):

- a plain ``str``: the description (``limit: Annotated[int, "Maximum results"]``);
- pydantic's ``Field(...)``: ``description``, ``title``, ``examples``,
  ``json_schema_extra`` (a dict) and its constraints (``gt``, ``ge``, ``lt``, ``le``,
  ``multiple_of``, ``min_length``, ``max_length``, ``pattern``);
- ``annotated_types``: ``Gt``, ``Ge``, ``Lt``, ``Le``, ``MultipleOf``, ``MinLen``,
  ``MaxLen``, ``Len``, ``Interval`` and ``doc()``; ``typing_extensions.Doc``.

Each constraint becomes its JSON Schema keyword (``minimum``, ``exclusiveMaximum``,
``minLength`` / ``minItems`` / ``minProperties`` by the kind of ``T``, ``pattern`` ...)
*and* a check the converter runs after structuring, so the schema and the binding agree.
Anything else found in the metadata is reported in ``ignored`` (registration warns with
:class:`IgnoredMetadataWarning`), never dropped silently.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Final, final, get_origin

import attrs

from ._types import is_pydantic, is_record, mapping_args, sequence_kind, strip_annotated

__all__ = ["Check", "IgnoredMetadataWarning", "Metadata", "checked_or_bare", "read_metadata"]


class IgnoredMetadataWarning(UserWarning):
    """``Annotated`` metadata that trimcp can neither put in a schema nor enforce."""


Check = tuple[Callable[[Any], bool], str]
"""A test a structured value must pass, and the message when it does not."""


@final
@attrs.frozen
class Metadata:
    """What the metadata of one ``Annotated`` type says."""

    description: str | None = None
    schema: dict[str, Any] = attrs.field(factory=dict)
    checks: tuple[Check, ...] = ()
    ignored: tuple[str, ...] = ()


_EMPTY: Final = Metadata()
_NUMERIC: Final[dict[str, tuple[str, Callable[[Any, Any], bool], str]]] = {
    "gt": ("exclusiveMinimum", operator.gt, "greater than"),
    "ge": ("minimum", operator.ge, "at least"),
    "lt": ("exclusiveMaximum", operator.lt, "less than"),
    "le": ("maximum", operator.le, "at most"),
}
_SIZE_KEYWORDS: Final = {
    "string": ("minLength", "maxLength", "characters"),
    "array": ("minItems", "maxItems", "items"),
    "object": ("minProperties", "maxProperties", "members"),
}
_ANNOTATED_TYPES: Final = frozenset(
    ("Gt", "Ge", "Lt", "Le", "MultipleOf", "MinLen", "MaxLen", "Len", "Interval")
)


def _shape(tp: Any) -> str | None:
    if tp is str:
        return "string"
    if sequence_kind(tp) is not None:
        return "array"
    if mapping_args(tp) is not None or is_record(tp) or is_pydantic(tp):
        return "object"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _multiple(value: Any, of: Any) -> bool:
    if isinstance(value, int) and isinstance(of, int):
        return value % of == 0
    try:
        quotient = value / of
        return bool(quotient == int(quotient))
    except (OverflowError, ValueError, ZeroDivisionError):
        return False


class _Reader:
    def __init__(self, tp: Any) -> None:
        self.shape = _shape(strip_annotated(tp))
        self.description: str | None = None
        self.schema: dict[str, Any] = {}
        self.checks: list[Check] = []
        self.ignored: list[str] = []

    def read(self, items: Iterable[Any]) -> None:
        for item in items:
            self.one(item)

    def one(self, item: Any) -> None:
        cls = type(item)
        module, name = cls.__module__ or "", cls.__name__
        if isinstance(item, str):
            if self.description is None:
                self.description = item
        elif module.startswith("pydantic") and name == "FieldInfo":
            self.field_info(item)
        elif module == "annotated_types" and name in _ANNOTATED_TYPES:
            if name in ("Len", "Interval"):
                self.read(item)  # GroupedMetadata: iterates into the ones above
            else:
                self.constraints({f.name: getattr(item, f.name) for f in dataclasses.fields(item)})
        elif name in ("DocInfo", "Doc") and isinstance(getattr(item, "documentation", 0), str):
            self.description = self.description or item.documentation
        elif module.startswith("pydantic") and name == "_PydanticGeneralMetadata":
            self.constraints(dict(vars(item)))
        else:
            self.ignored.append(repr(item))

    def field_info(self, info: Any) -> None:
        if info.description is not None and self.description is None:
            self.description = info.description
        if info.title is not None:
            self.schema["title"] = info.title
        if info.examples is not None:
            self.schema["examples"] = list(info.examples)
        if isinstance(info.json_schema_extra, dict):
            self.schema.update(info.json_schema_extra)
        elif info.json_schema_extra is not None:
            self.ignored.append("Field(json_schema_extra=<callable>)")
        if info.alias is not None:
            self.ignored.append(f"Field(alias={info.alias!r})")
        self.read(info.metadata)

    def constraints(self, values: dict[str, Any]) -> None:
        for key, bound in values.items():
            if bound is None:
                continue
            check = self.constraint(key, bound)
            if check is None:
                self.ignored.append(f"{key}={bound!r}")
            else:
                self.checks.append(check)

    def constraint(self, key: str, bound: Any) -> Check | None:
        """Record the schema keyword of one constraint; return its check (``None``: the
        constraint does not apply to this type)."""
        numeric = self.shape is None and _is_number(bound)
        if key in _NUMERIC and numeric:
            keyword, compare, words = _NUMERIC[key]
            self.schema[keyword] = bound
            return _bounded(compare, bound), f"expected {words} {bound}"
        if key == "multiple_of" and numeric:
            self.schema["multipleOf"] = bound
            return _multiple_of(bound), f"expected a multiple of {bound}"
        if key in ("min_length", "max_length") and self.shape is not None:
            low, high, unit = _SIZE_KEYWORDS[self.shape]
            if key == "min_length":
                self.schema[low] = bound
                return _bounded(operator.ge, bound, len), f"expected at least {bound} {unit}"
            self.schema[high] = bound
            return _bounded(operator.le, bound, len), f"expected at most {bound} {unit}"
        if key == "pattern" and self.shape == "string":
            self.schema["pattern"] = bound
            return _matches(re.compile(bound)), f"expected to match {bound!r}"
        return None


def _bounded(
    compare: Callable[[Any, Any], bool], bound: Any, measure: Callable[[Any], Any] | None = None
) -> Callable[[Any], bool]:
    if measure is None:
        return lambda value: compare(value, bound)
    return lambda value: compare(measure(value), bound)


def _multiple_of(bound: Any) -> Callable[[Any], bool]:
    return lambda value: _multiple(value, bound)


def _matches(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda value: pattern.search(value) is not None


def read_metadata(tp: Any) -> Metadata:
    """What ``Annotated`` type *tp* says (an empty :class:`Metadata` for other types)."""
    if get_origin(tp) is not Annotated:
        return _EMPTY
    reader = _Reader(tp)
    reader.read(tp.__metadata__)
    if not (reader.description or reader.schema or reader.checks or reader.ignored):
        return _EMPTY
    return Metadata(reader.description, reader.schema, tuple(reader.checks), tuple(reader.ignored))


def checked_or_bare(tp: Any) -> Any:
    """*tp* itself when it is an ``Annotated`` type whose metadata has checks (its hook
    enforces them), else *tp* without ``Annotated``."""
    return tp if read_metadata(tp).checks else strip_annotated(tp)

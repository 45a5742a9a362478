"""Form-mode elicitation schemas, typed: :class:`ElicitationForm` and its fields.

A form's ``requestedSchema`` is restricted by the spec to a flat object whose properties
are primitives: strings (optionally with ``format`` and length bounds), numbers and
integers (with bounds), booleans, and enums in five shapes (2025-11-25):

* untitled single select: ``{"type": "string", "enum": [...]}``;
* titled single select: ``{"type": "string", "oneOf": [{"const": v, "title": t}...]}``;
* legacy titled: ``{"type": "string", "enum": [...], "enumNames": [...]}``;
* untitled multi select: ``{"type": "array", "items": {"type": "string", "enum": [...]}}``;
* titled multi select: ``{"type": "array", "items": {"anyOf": [{"const", "title"}...]}}``.

:meth:`ElicitationForm.parse` turns a schema into fields (a schema outside the
restriction is a :class:`FormSchemaError`, which the client answers with ``-32602``).
:meth:`ElicitationForm.complete` checks an answer against the form and, when asked,
fills each missing field that has a ``default`` with it: that is how "defaults filled
by the client" works, so a handler may return only what the user changed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final, final

import attrs

__all__ = ["ElicitationForm", "EnumOption", "FieldKind", "FormField", "FormSchemaError"]

#: Fields one form may have; a larger schema is refused.
MAX_FORM_FIELDS: Final = 256


class FormSchemaError(ValueError):
    """The ``requestedSchema`` is not a restricted elicitation schema."""


class FieldKind(enum.Enum):
    """What a form field holds."""

    STRING = "string"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    SINGLE_SELECT = "single_select"
    MULTI_SELECT = "multi_select"


@final
@attrs.frozen
class EnumOption:
    """One choice of a select field; ``title`` is its display label, if any."""

    value: str
    title: str | None = None


@final
@attrs.frozen(kw_only=True)
class FormField:
    """One property of the form, with the constraints the schema gave it."""

    name: str
    kind: FieldKind
    required: bool = False
    title: str | None = None
    description: str | None = None
    default: Any = None
    options: tuple[EnumOption, ...] = ()
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    def problem(self, value: Any) -> str | None:  # noqa: C901 - one branch per kind
        """Why ``value`` does not fit this field, or ``None``."""
        kind = self.kind
        if kind is FieldKind.BOOLEAN:
            return None if isinstance(value, bool) else "expected a boolean"
        if kind in (FieldKind.NUMBER, FieldKind.INTEGER):
            if isinstance(value, bool) or not isinstance(value, int | float):
                return "expected a number"
            if kind is FieldKind.INTEGER and not float(value).is_integer():
                return "expected an integer"
            if self.minimum is not None and value < self.minimum:
                return f"must be at least {self.minimum}"
            if self.maximum is not None and value > self.maximum:
                return f"must be at most {self.maximum}"
            return None
        allowed = {option.value for option in self.options}
        if kind is FieldKind.MULTI_SELECT:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return "expected a list of strings"
            if any(v not in allowed for v in value):
                return "holds a value that is not one of the options"
            if self.min_items is not None and len(value) < self.min_items:
                return f"needs at least {self.min_items} choices"
            if self.max_items is not None and len(value) > self.max_items:
                return f"allows at most {self.max_items} choices"
            return None
        if not isinstance(value, str):
            return "expected a string"
        if kind is FieldKind.SINGLE_SELECT:
            return None if value in allowed else "is not one of the options"
        if self.min_length is not None and len(value) < self.min_length:
            return f"must be at least {self.min_length} characters"
        if self.max_length is not None and len(value) > self.max_length:
            return f"must be at most {self.max_length} characters"
        return None


def _options(items: Any, key: str = "const") -> tuple[EnumOption, ...]:
    if not isinstance(items, list):
        raise FormSchemaError("enum options must be a list")
    options = []
    for item in items:
        if isinstance(item, str):
            options.append(EnumOption(item))
        elif isinstance(item, dict) and isinstance(item.get(key), str):
            title = item.get("title")
            options.append(EnumOption(item[key], title if isinstance(title, str) else None))
        else:
            raise FormSchemaError(f"bad enum option {item!r}")
    return tuple(options)


def _string_options(schema: Mapping[str, Any]) -> tuple[EnumOption, ...] | None:
    if "oneOf" in schema:
        return _options(schema["oneOf"])
    if "enum" not in schema:
        return None
    options = _options(schema["enum"])
    names = schema.get("enumNames")
    if isinstance(names, list) and len(names) == len(options):
        options = tuple(EnumOption(o.value, str(n)) for o, n in zip(options, names, strict=True))
    return options


def _number(schema: Mapping[str, Any], key: str) -> Any:
    value = schema.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _field(name: str, schema: Any, required: bool) -> FormField:
    if not isinstance(schema, dict):
        raise FormSchemaError(f"property {name!r} is not a schema object")
    kind_name = schema.get("type")
    common: dict[str, Any] = {
        "name": name,
        "required": required,
        "title": schema.get("title"),
        "description": schema.get("description"),
        "default": schema.get("default"),
    }
    if kind_name == "string":
        options = _string_options(schema)
        if options is not None:
            return FormField(kind=FieldKind.SINGLE_SELECT, options=options, **common)
        return FormField(
            kind=FieldKind.STRING,
            format=schema.get("format"),
            min_length=_number(schema, "minLength"),
            max_length=_number(schema, "maxLength"),
            **common,
        )
    if kind_name in ("number", "integer"):
        kind = FieldKind.NUMBER if kind_name == "number" else FieldKind.INTEGER
        return FormField(
            kind=kind, minimum=_number(schema, "minimum"), maximum=_number(schema, "maximum"),
            **common,
        )  # fmt: skip
    if kind_name == "boolean":
        return FormField(kind=FieldKind.BOOLEAN, **common)
    if kind_name == "array":
        items = schema.get("items")
        if not isinstance(items, dict) or not ("enum" in items or "anyOf" in items):
            raise FormSchemaError(f"property {name!r}: arrays must be multi-select enums")
        options = _options(items["anyOf"] if "anyOf" in items else items["enum"])
        return FormField(
            kind=FieldKind.MULTI_SELECT,
            options=options,
            min_items=_number(schema, "minItems"),
            max_items=_number(schema, "maxItems"),
            **common,
        )
    raise FormSchemaError(f"property {name!r} has unsupported type {kind_name!r}")


@final
@attrs.frozen
class ElicitationForm:
    """The typed view of a form's ``requestedSchema`` (see the module doc)."""

    fields: tuple[FormField, ...]

    @classmethod
    def parse(cls, schema: Mapping[str, Any]) -> ElicitationForm:
        """The form of ``schema``; raises :class:`FormSchemaError` outside the restriction."""
        if schema.get("type") != "object":
            raise FormSchemaError("requestedSchema must have type 'object'")
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list):
            raise FormSchemaError("requestedSchema has malformed properties or required")
        if len(properties) > MAX_FORM_FIELDS:
            raise FormSchemaError(f"a form may have at most {MAX_FORM_FIELDS} fields")
        return cls(tuple(_field(n, s, n in required) for n, s in properties.items()))

    def field(self, name: str) -> FormField:
        """The field called ``name`` (``KeyError`` if there is none)."""
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        """Each field's ``default``, for the fields that have one."""
        return {f.name: f.default for f in self.fields if f.default is not None}

    def problems(self, content: Mapping[str, Any]) -> list[str]:
        """Every way ``content`` breaks the form (unknown, missing or ill-typed fields)."""
        names = {f.name for f in self.fields}
        found = [f"{key}: not a field of the form" for key in content if key not in names]
        for field in self.fields:
            if field.name not in content:
                if field.required:
                    found.append(f"{field.name}: required")
                continue
            problem = field.problem(content[field.name])
            if problem is not None:
                found.append(f"{field.name}: {problem}")
        return found

    def complete(self, content: Mapping[str, Any], *, fill_defaults: bool = True) -> dict[str, Any]:
        """``content`` checked against the form, with missing fields set to their
        ``default`` when ``fill_defaults``. Raises :class:`ValueError` listing the
        problems."""
        answer = {**self.defaults(), **content} if fill_defaults else dict(content)
        problems = self.problems(answer)
        if problems:
            raise ValueError("the elicitation answer does not fit the form: " + "; ".join(problems))
        return answer

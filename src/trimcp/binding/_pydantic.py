"""pydantic models as tool parameters and return types, when pydantic is installed.

pydantic is not a dependency of trimcp: nothing here imports it. A model class brings its
own rules, and trimcp follows them rather than its own: the schema is the model's
``model_json_schema()`` (its ``$defs`` moved to the root of the schema it is part of),
values are read with ``model_validate`` (the model's own strictness, aliases and
``extra`` setting apply) and written with ``model_dump(mode="json", by_alias=True)``.
pydantic's errors keep their paths: ``Input should be a valid integer @
$.arguments.item.count``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import cattrs

from ._errors import InvalidValue, with_attribute_note, with_index_note

__all__ = ["model_schema", "structure_model", "unstructure_model"]

Mode = Literal["validation", "serialization"]


def model_schema(cls: Any, mode: Mode) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(schema, defs)``: the model's JSON Schema with its ``$defs`` taken out (their
    references point at the root's ``#/$defs/``, where the caller puts them)."""
    schema: dict[str, Any] = cls.model_json_schema(mode=mode, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = schema.pop("$defs", {})
    return schema, defs


def structure_model(cls: Any) -> Callable[[Any, Any], Any]:
    """The structure hook of model class *cls*."""
    validation_error: type[Exception] = __import__("pydantic").ValidationError

    def structure(value: Any, _: Any) -> Any:
        if value.__class__ is not dict:
            raise InvalidValue("expected object")
        try:
            return cls.model_validate(value)
        except validation_error as exc:
            raise _as_cattrs(exc, cls) from None

    return structure


def unstructure_model(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True)


def _as_cattrs(exc: Any, cls: Any) -> cattrs.ClassValidationError:
    """pydantic's errors as the nested cattrs groups :func:`format_errors` reads, one
    leaf per error, with its location as the path."""
    root: list[Exception] = []
    for error in exc.errors(include_url=False):
        node: Exception = InvalidValue(error.get("msg", "invalid value"))
        loc = list(error.get("loc", ()))
        for depth in range(len(loc) - 1, -1, -1):
            step = loc[depth]
            if depth == 0 or not isinstance(step, int):
                with_attribute_note(node, str(step), Any, cls.__qualname__)
                if depth:
                    node = cattrs.ClassValidationError("While structuring", [node], dict)
            else:
                with_index_note(node, step, Any)
                node = cattrs.IterableValidationError("While structuring", [node], list)
        root.append(node)
    return cattrs.ClassValidationError(f"While structuring {cls.__qualname__}", root, cls)

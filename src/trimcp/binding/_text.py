"""Typed values from the strings a protocol field carries (prompt arguments).

MCP prompt arguments are strings; a prompt function may still declare ``count: int`` or
``when: datetime.date``. :func:`text_reader` gives, once per type, the function that reads
such a string:

- a type a JSON string can be (``str``, string ``Literal`` / ``Enum`` values, dates,
  UUIDs, paths, decimals, bytes, unions holding one) is read from the string as it is;
- otherwise, or when that fails, the string is read as JSON first: ``"5"`` is the
  ``int`` 5, ``"true"`` a ``bool``, ``'["a", "b"]'`` a ``list[str]``, ``'{"x": 1}'`` a
  record.

Either way the value then goes through the strict converter, so its checks (and the
type's ``Annotated`` constraints) apply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import cattrs

from ._converter import structure
from ._errors import format_errors
from ._types import describe, json_kinds, strip_annotated

__all__ = ["text_reader"]


def text_reader(tp: Any) -> Callable[[str], Any]:
    """The reader of *tp* from text (see the module doc). It raises :class:`ValueError`
    with a readable message (``expected int``) when the text does not fit."""
    kinds = json_kinds(tp)
    if strip_annotated(tp) is str:
        return _as_is
    as_text = kinds is None or str in kinds
    as_json = kinds is None or bool(kinds - {str})
    expected = f"expected {describe(tp)}"

    def read(text: str) -> Any:
        if as_text:
            try:
                return structure(text, tp)
            except cattrs.BaseValidationError as exc:
                if not as_json:
                    raise ValueError(_first(exc, expected)) from None
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(expected) from None
        try:
            return structure(value, tp)
        except cattrs.BaseValidationError as exc:
            raise ValueError(_first(exc, expected)) from None

    return read


def _as_is(text: str) -> str:
    return text


def _first(exc: BaseException, fallback: str) -> str:
    messages = format_errors(exc, "$")
    if len(messages) == 1 and messages[0].endswith(" @ $"):
        return messages[0].removesuffix(" @ $")
    return "; ".join(messages) or fallback

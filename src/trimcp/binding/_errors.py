"""Structure errors and their readable form.

Hooks raise :class:`InvalidValue` (a ``ValueError`` whose message already reads well,
e.g. ``expected int``) or ``KeyError`` for a missing member, with cattrs' notes attached so
:func:`cattrs.transform_error` can build the path; objects raise
:class:`cattrs.ClassValidationError`, lists and dicts :class:`cattrs.IterableValidationError`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ForbiddenExtraKeysError,
    IterableValidationNote,
)

__all__ = [
    "InvalidValue",
    "UnknownFields",
    "format_errors",
    "format_exception",
    "with_attribute_note",
    "with_index_note",
]


E = TypeVar("E", bound=BaseException)


class InvalidValue(ValueError):
    """A value of the wrong JSON type or outside the allowed set; ``str(exc)`` is the
    message shown to the peer (``expected int``, ``expected one of 'a', 'b'``)."""


class UnknownFields(ForbiddenExtraKeysError):
    """Keys an object type does not know (its schema says ``additionalProperties:
    false``); ``known`` lists the keys it does, for the message."""

    def __init__(self, extra_fields: set[str], known: frozenset[str], cl: type) -> None:
        super().__init__(None, cl, extra_fields)
        self.known = known


def with_attribute_note(exc: E, name: str, tp: Any, owner: str) -> E:
    """Attach the note that makes ``transform_error`` print ``.<name>`` in the path."""
    exc.add_note(AttributeValidationNote(f"Structuring class {owner} @ attribute {name}", name, tp))
    return exc


def with_index_note(exc: E, index: int | str, tp: Any) -> E:
    """Attach the note that makes ``transform_error`` print ``[index]`` in the path."""
    exc.add_note(IterableValidationNote(f"Structuring @ index {index!r}", index, tp))
    return exc


def format_exception(exc: BaseException, tp: Any) -> str:
    """Describe one leaf error (the part before ``@ path``)."""
    if isinstance(exc, InvalidValue):
        return str(exc)
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, UnknownFields):
        known = ", ".join(sorted(exc.known)) or "none"
        return f"unknown field(s) {', '.join(sorted(exc.extra_fields))} (known: {known})"
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"extra fields found ({', '.join(sorted(exc.extra_fields))})"
    if isinstance(exc, cattrs.BaseValidationError):
        return "invalid value"
    return f"invalid value ({exc})"


def format_errors(exc: BaseException, path: str = "$.params") -> list[str]:
    """Turn a structure failure into ``"<problem> @ <path>"`` messages, one per leaf error,
    e.g. ``["expected int @ $.params.arguments.limit"]``. Paths use wire (camelCase) names.

    Accepts any exception; one that is not a cattrs validation error gives one message at
    *path*.
    """
    return cattrs.transform_error(exc, path, format_exception=format_exception)

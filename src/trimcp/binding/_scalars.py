"""Scalar types that JSON carries as strings: dates and times, UUIDs, paths, decimals, bytes.

Each has one :class:`Scalar`: its JSON Schema, how a JSON value is read into it (strictly:
the JSON type must be right, and the text must parse), and how it is written.

=====================  ==========================================  =======================
Python type            JSON Schema                                 written as
=====================  ==========================================  =======================
``datetime``           ``string``, ``format: date-time``            ``isoformat()``
``date``               ``string``, ``format: date``                 ``isoformat()``
``time``               ``string``, ``format: time``                 ``isoformat()``
``UUID``               ``string``, ``format: uuid``                 ``str()``
``Path`` (any          ``string``                                  ``str()``
``PurePath``)
``Decimal``            ``number`` or a decimal ``string``           a string (exact)
``bytes``              ``string``, ``contentEncoding: base64``      base64 (standard)
=====================  ==========================================  =======================

A ``Decimal`` is read from a JSON number (through its shortest text, so ``0.1`` is
``Decimal("0.1")``) or from a string matching the advertised pattern, and written as a
string so that no digit is lost on the way out.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import pathlib
import re
import uuid
from collections.abc import Callable
from typing import Any, Final, final

import attrs

__all__ = ["SCALAR_CLASSES", "Scalar", "scalar_for"]

NoneType: Final = type(None)


@final
@attrs.frozen
class Scalar:
    """How one string-carried type maps to JSON."""

    schema: dict[str, Any]
    #: Reads a JSON value (already checked to be of one of ``kinds``); raises ValueError.
    parse: Callable[[Any], Any]
    write: Callable[[Any], Any]
    #: The JSON value classes accepted.
    kinds: frozenset[type]
    #: For messages: ``expected <label>``.
    label: str


_DECIMAL_TEXT: Final = r"^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"
_DECIMAL_RE: Final = re.compile(_DECIMAL_TEXT)
_STR: Final = frozenset((str,))


def _iso(cls: Any) -> Callable[[Any], Any]:
    def parse(value: str) -> Any:
        return cls.fromisoformat(value)

    return parse


def _write_iso(value: Any) -> str:
    return value.isoformat()  # type: ignore[no-any-return]


def _parse_uuid(value: str) -> uuid.UUID:
    return uuid.UUID(value)


def _parse_decimal(value: Any) -> decimal.Decimal:
    if value.__class__ is str:
        if _DECIMAL_RE.match(value) is None:
            raise ValueError("not a decimal number")
        return decimal.Decimal(value)
    return decimal.Decimal(repr(value))  # the shortest text of a float: 0.1 -> "0.1"


def _parse_bytes(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as exc:
        raise ValueError(str(exc)) from None


def _write_bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _string(fmt: str | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if fmt is not None:
        schema["format"] = fmt
    schema.update(extra)
    return schema


_TABLE: Final[dict[type, Scalar]] = {
    datetime.datetime: Scalar(
        _string("date-time"), _iso(datetime.datetime), _write_iso, _STR, "date-time string"
    ),
    datetime.date: Scalar(_string("date"), _iso(datetime.date), _write_iso, _STR, "date string"),
    datetime.time: Scalar(_string("time"), _iso(datetime.time), _write_iso, _STR, "time string"),
    uuid.UUID: Scalar(_string("uuid"), _parse_uuid, str, _STR, "UUID string"),
    decimal.Decimal: Scalar(
        {"anyOf": [{"type": "number"}, {"type": "string", "pattern": _DECIMAL_TEXT}]},
        _parse_decimal,
        str,
        frozenset((str, int, float)),
        "decimal number",
    ),
    bytes: Scalar(
        _string(contentEncoding="base64"), _parse_bytes, _write_bytes, _STR, "base64 string"
    ),
}


SCALAR_CLASSES: Final = (*_TABLE, pathlib.PurePath)
"""The classes with a :class:`Scalar` (subclasses of ``PurePath`` too)."""


def scalar_for(tp: Any) -> Scalar | None:
    """The :class:`Scalar` of *tp*, or ``None`` when it is not one of these types."""
    if not isinstance(tp, type):
        return None
    found = _TABLE.get(tp)
    if found is not None:
        return found
    if issubclass(tp, pathlib.PurePath):
        return Scalar(_string(), tp, str, _STR, "path string")
    return None

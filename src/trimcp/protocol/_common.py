"""Shared aliases of the MCP vocabulary and the field conventions of its attrs classes.

Field conventions (read by :mod:`trimcp.binding`, which owns the converter):

- attribute names are snake_case; the wire name is their camelCase form, ``meta`` is
  ``_meta``, and ``metadata={WIRE_NAME: "..."}`` overrides the rule for one field;
- a field declared ``attrs.field(default="text", init=False)`` with a one-value
  ``Literal`` type is a *tag*: always written, required and checked when read, and what
  unions of classes are discriminated by (``type`` for content blocks);
- a field with ``metadata={EXTRA_KEYS: True}`` (type ``dict[str, Any] | None``) collects
  the unknown keys of the object when read and writes them back, so open-ended objects
  (capabilities) survive a round trip;
- ``metadata={DESCRIPTION: "..."}`` becomes the JSON Schema ``description``.
"""

from __future__ import annotations

from typing import Any, Final, Literal

__all__ = [
    "DESCRIPTION",
    "EXTRA_KEYS",
    "WIRE_NAME",
    "Cursor",
    "Meta",
    "ProgressToken",
    "RequestId",
    "Role",
]

WIRE_NAME: Final = "trimcp.wire_name"
EXTRA_KEYS: Final = "trimcp.extra_keys"
DESCRIPTION: Final = "description"

EXTRA_METADATA: Final = {EXTRA_KEYS: True}

RequestId = str | int
"""A JSON-RPC request id (never null in MCP)."""

ProgressToken = str | int
"""The ``_meta.progressToken`` of a request."""

Cursor = str
"""An opaque pagination cursor."""

Role = Literal["user", "assistant"]
"""The sender or recipient of messages and data in a conversation."""

Meta = dict[str, Any]
"""The ``_meta`` object: reserved keys such as ``progressToken``, plus anything else."""

"""Cached JSON Schema validators for schemas trimcp did not generate itself.

Schemas we generate are enforced by the strict converter; jsonschema is for explicit
schemas (a tool registered with a hand-written ``inputSchema``, a peer's ``outputSchema``
when a client checks ``structuredContent``). Compiling a validator is costly, so each
distinct schema is compiled once and kept in a bounded LRU cache keyed by its canonical
JSON text (equal schemas share a validator whatever their key order or identity).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Final

import jsonschema  # type: ignore[import-untyped]  # no stubs in the venv
import jsonschema.protocols  # type: ignore[import-untyped]
import jsonschema.validators  # type: ignore[import-untyped]

__all__ = ["validator_for"]

CACHE_SIZE: Final = 512


def validator_for(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    """A validator for *schema*: Draft 2020-12 unless ``$schema`` names another dialect
    (MCP: the declared dialect MUST be honoured; 2020-12 is the default).

    The validator works on a private copy, so mutating *schema* afterwards is harmless.
    ``$ref`` to remote documents is never fetched (jsonschema's default registry does
    not retrieve), so such references fail to resolve rather than reach the network.

    Raises:
        jsonschema.SchemaError: *schema* is not a valid schema of its dialect.
        TypeError: *schema* is not JSON-serialisable.
    """
    key = json.dumps(schema, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return _compile(key)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compile(key: str) -> jsonschema.protocols.Validator:
    schema = json.loads(key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)

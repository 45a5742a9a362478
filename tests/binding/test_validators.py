"""validator_for: one compiled validator per distinct schema, dialect-aware, bounded."""

from __future__ import annotations

import jsonschema
import pytest
import referencing.exceptions

from trimcp.binding import validator_for
from trimcp.binding._validators import CACHE_SIZE, _compile

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_validates() -> None:
    v = validator_for(SCHEMA)
    assert v.is_valid({"a": 1})
    assert not v.is_valid({"a": "1"})
    assert isinstance(v, jsonschema.Draft202012Validator)


def test_cached_by_content_not_identity_or_key_order() -> None:
    same = {"required": ["a"], "properties": {"a": {"type": "integer"}}, "type": "object"}
    assert validator_for(SCHEMA) is validator_for(dict(SCHEMA)) is validator_for(same)
    assert validator_for({"type": "string"}) is not validator_for(SCHEMA)


def test_mutating_the_schema_afterwards_is_harmless() -> None:
    schema = {"type": "object", "properties": {"b": {"type": "string"}}}
    v = validator_for(schema)
    schema["properties"]["b"]["type"] = "integer"  # type: ignore[index]
    assert v.is_valid({"b": "x"})


def test_declared_dialect_is_honoured() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"}
    assert isinstance(validator_for(draft7), jsonschema.Draft7Validator)
    # 2020-12 keyword that draft-07 does not know: ignored there, enforced by default.
    tuple_schema = {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert not validator_for(tuple_schema).is_valid(["x"])
    assert validator_for({**tuple_schema, "$schema": draft7["$schema"]}).is_valid(["x"])


def test_invalid_schemas_are_rejected() -> None:
    with pytest.raises(jsonschema.SchemaError):
        validator_for({"type": "no-such-type"})


def test_remote_refs_are_not_fetched() -> None:
    v = validator_for({"$ref": "https://example.invalid/schema.json"})
    with pytest.raises(referencing.exceptions.Unresolvable):
        v.is_valid(1)


def test_cache_is_bounded() -> None:
    assert _compile.cache_info().maxsize == CACHE_SIZE
    for i in range(CACHE_SIZE + 10):
        validator_for({"const": i})
    assert _compile.cache_info().currsize <= CACHE_SIZE

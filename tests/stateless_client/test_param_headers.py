"""``x-mcp-header`` annotations and ``Mcp-Param-*`` values (2026-07-28)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http._client_params import (
    MAX_SAFE_INTEGER,
    ToolHeaderTable,
    header_params,
    param_header_values,
)
from trimcp.transports.http._header_values import decode_header_value, encode_header_value


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_valid_annotations_are_found_along_properties_chains() -> None:
    found = header_params(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            priority={"type": "integer", "x-mcp-header": "Priority"},
            flag={"type": ["boolean", "null"], "x-mcp-header": "Flag"},
            nested={
                "type": "object",
                "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}},
            },
            query={"type": "string"},
        )
    )
    assert found == [
        ("Region", ("region",)),
        ("Priority", ("priority",)),
        ("Flag", ("flag",)),
        ("Tenant", ("nested", "tenant")),
    ]
    assert header_params({"type": "object"}) == []


@pytest.mark.parametrize(
    "bad",
    [
        schema(v={"type": "string", "x-mcp-header": ""}),
        schema(v={"type": "object", "x-mcp-header": "Data"}),
        schema(v={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}),
        schema(v={"type": "null", "x-mcp-header": "Nil"}),
        schema(v={"type": "number", "x-mcp-header": "Score"}),
        schema(v={"x-mcp-header": "Untyped"}),
        schema(
            a={"type": "string", "x-mcp-header": "Region"},
            b={"type": "string", "x-mcp-header": "Region"},
        ),
        schema(
            a={"type": "string", "x-mcp-header": "MyField"},
            b={"type": "string", "x-mcp-header": "myfield"},
        ),
        schema(v={"type": "string", "x-mcp-header": "My Region"}),
        schema(v={"type": "string", "x-mcp-header": "Region:Primary"}),
        schema(v={"type": "string", "x-mcp-header": "Région"}),
        schema(v={"type": "string", "x-mcp-header": "Region\t1"}),
        schema(v={"type": "string", "x-mcp-header": 7}),
        schema(v={"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}),
        {
            "type": "object",
            "anyOf": [{"properties": {"v": {"type": "string", "x-mcp-header": "V"}}}],
        },
        {
            "type": "object",
            "$defs": {"v": {"type": "string", "x-mcp-header": "V"}},
            "properties": {"v": {"$ref": "#/$defs/v"}},
        },
        {"type": "object", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations_invalidate_the_tool(bad: dict[str, Any]) -> None:
    assert isinstance(header_params(bad), str)
    table = ToolHeaderTable()
    assert table.learn("t", bad) is not None
    assert table.headers_for("t", {"v": "x"}) == []


def test_values_are_converted_and_absent_or_null_ones_omitted() -> None:
    params = [
        ("S", ("s",)),
        ("I", ("i",)),
        ("B", ("b",)),
        ("F", ("f",)),
        ("N", ("n",)),
        ("M", ("missing",)),
        ("Big", ("big",)),
        ("Deep", ("o", "x")),
    ]
    args = {
        "s": "Hello, 世界",
        "i": -7,
        "b": False,
        "f": 42.0,
        "n": None,
        "big": MAX_SAFE_INTEGER + 1,
        "o": {"x": "y"},
    }
    assert param_header_values(params, args) == [
        ("Mcp-Param-S", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("Mcp-Param-I", "-7"),
        ("Mcp-Param-B", "false"),
        ("Mcp-Param-F", "42"),
        ("Mcp-Param-Deep", "y"),
    ]


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("us west 1", "us west 1"),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("\tindented", "=?base64?" + base64.b64encode(b"\tindented").decode() + "?="),
    ],
)
def test_the_spec_encoding_examples(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded


@given(st.text())
def test_header_values_round_trip_and_are_header_safe(value: str) -> None:
    encoded = encode_header_value(value)
    assert decode_header_value(encoded) == value
    assert encoded.isascii()
    assert all(0x20 <= ord(c) < 0x7F for c in encoded)
    assert encoded == encoded.strip()
    if encoded == value:
        assert not (value.startswith("=?base64?") and value.endswith("?="))


def test_the_table_is_bounded_and_forgets_the_oldest() -> None:
    table = ToolHeaderTable(max_tools=2)
    annotated = schema(r={"type": "string", "x-mcp-header": "R"})
    for name in ("a", "b", "c"):
        assert table.learn(name, annotated) is None
    assert len(table) == 2
    assert table.headers_for("a", {"r": "x"}) == []
    assert table.headers_for("c", {"r": "x"}) == [("Mcp-Param-R", "x")]
    assert table.headers_for(None, {"r": "x"}) == []


def test_a_huge_schema_is_refused_not_walked_forever() -> None:
    deep: dict[str, Any] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(100):
        deep = {"type": "object", "properties": {"p": deep}}
    assert isinstance(header_params(deep), str)

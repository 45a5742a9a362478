"""``x-mcp-header`` annotations and the ``Mcp-Param-*`` check, without a transport."""

from __future__ import annotations

from typing import Any

import pytest

from trimcp.dispatch import McpError
from trimcp.server._param_headers import MAX_DEPTH, HeaderParam, check_param_headers, header_params

SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "nested": {
            "type": "object",
            "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}},
        },
        "listed": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
        "either": {"anyOf": [{"type": "string", "x-mcp-header": "Either"}]},
        "empty": {"type": "string", "x-mcp-header": ""},
    },
}


def test_only_properties_chains_count() -> None:
    assert header_params(SCHEMA) == [
        HeaderParam("Region", ("region",)),
        HeaderParam("Id", ("nested", "id")),
    ]
    assert header_params(None) == []
    assert header_params({"properties": "nonsense"}) == []


def test_depth_is_bounded() -> None:
    schema: dict[str, Any] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(MAX_DEPTH + 5):
        schema = {"type": "object", "properties": {"p": schema}}
    assert header_params(schema) == []


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"region": "eu"}, {"region": ["eu"]}),
        ({"region": "eu", "nested": {"id": 12}}, {"region": ["eu"], "id": ["12"]}),
        ({"region": "eu", "nested": {"id": 12}}, {"region": ["eu"], "id": ["+12"]}),
        ({"region": None}, {}),
        ({}, {}),
        ({"region": "x y "}, {"region": ["=?base64?eCB5IA==?="]}),
    ],
)
def test_accepted(arguments: dict[str, Any], headers: dict[str, list[str]]) -> None:
    check_param_headers(SCHEMA, arguments, headers)


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"region": "eu"}, {}),
        ({"region": "eu"}, {"region": ["eu", "eu"]}),
        ({"region": "eu"}, {"region": ["EU"]}),
        ({}, {"region": ["eu"]}),
        ({"region": "eu", "nested": {"id": 12}}, {"region": ["eu"], "id": ["12.0"]}),
        ({"region": "eu"}, {"region": ["=?base64?@@?="]}),
        ({"region": "e\x01u"}, {"region": ["e\x01u"]}),
        ({"region": ["eu"]}, {"region": ["['eu']"]}),
    ],
)
def test_refused_with_header_mismatch(
    arguments: dict[str, Any], headers: dict[str, list[str]]
) -> None:
    with pytest.raises(McpError) as caught:
        check_param_headers(SCHEMA, arguments, headers)
    assert caught.value.code == -32020

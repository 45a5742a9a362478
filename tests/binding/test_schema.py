"""json_schema_for: shapes, validity as 2020-12 schemas, agreement with the converter."""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar, Literal

import attrs
import cattrs
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import protocol as p
from trimcp.binding import json_schema_for, structure, unstructure, validator_for

from ._strategies import JSON, near_misses, values_of


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@attrs.frozen(kw_only=True)
class SearchArgs:
    query: str = attrs.field(metadata={"description": "What to look for"})
    limit: int = 10
    tags: list[str] = attrs.field(factory=list)
    mode: Literal["fast", "exact"] = "fast"
    ratio: float | None = None


@attrs.frozen(kw_only=True)
class Address:
    street: str
    zip_code: int | str


@attrs.frozen(kw_only=True)
class Item:
    sku: str
    quantity: int
    price: float


@attrs.frozen(kw_only=True)
class Order:
    id: int | str
    items: list[Item]
    shipping: Address | None = None
    counts: dict[str, int] = attrs.field(factory=dict)
    color: Color = Color.RED
    flags: frozenset[str] = frozenset()
    coords: tuple[float, float] = (0.0, 0.0)
    history: tuple[int, ...] = ()
    note: Annotated[str | None, "free text"] = None
    extra_info: Any = None
    gift: bool = False


@attrs.frozen(kw_only=True)
class Tree:
    label: str
    children: list[Tree] = attrs.field(factory=list)


@attrs.frozen(kw_only=True)
class Closed:
    __trimcp_forbid_extra__: ClassVar[bool] = True
    a: int
    b: str | None = None


@attrs.frozen(kw_only=True)
class Message:
    role: Literal["user", "assistant"]
    content: list[p.TextContent | p.ImageContent]


REPRESENTATIVE = [SearchArgs, Order, Tree, Closed, Message, p.CallToolResult, p.Tool]


def test_object_shape() -> None:
    assert json_schema_for(SearchArgs) == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": "integer", "default": 10},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "mode": {"type": "string", "enum": ["fast", "exact"], "default": "fast"},
            "ratio": {"type": ["number", "null"]},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_empty_required_is_omitted() -> None:
    @attrs.frozen
    class Nothing:
        pass

    assert json_schema_for(Nothing) == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_member_shapes() -> None:
    props = json_schema_for(Order)["properties"]
    assert props["id"] == {"type": ["integer", "string"]}
    assert props["shipping"]["anyOf"][1] == {"type": "null"}
    assert props["shipping"]["anyOf"][0]["properties"]["zip_code"] == {
        "type": ["integer", "string"]
    }
    assert props["counts"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
        "default": {},
    }
    assert props["color"] == {"type": "string", "enum": ["red", "green"], "default": "red"}
    assert props["flags"] == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
        "default": [],
    }
    assert props["coords"]["prefixItems"] == [{"type": "number"}, {"type": "number"}]
    assert props["coords"]["minItems"] == props["coords"]["maxItems"] == 2
    assert props["history"] == {"type": "array", "items": {"type": "integer"}, "default": []}
    assert props["note"] == {"type": ["string", "null"], "description": "free text"}
    assert props["extra_info"] == {}
    assert props["gift"] == {"type": "boolean", "default": False}


def test_scalars_and_containers() -> None:
    assert json_schema_for(int) == {"type": "integer"}
    assert json_schema_for(float | None) == {"type": ["number", "null"]}
    assert json_schema_for(Literal["a"]) == {"type": "string", "const": "a"}
    assert json_schema_for(Literal[1, "a"]) == {"enum": [1, "a"]}
    assert json_schema_for(list[Any]) == {"type": "array"}
    assert json_schema_for(dict[str, Any]) == {"type": "object"}
    assert json_schema_for(dict[Literal["x", "y"], int])["propertyNames"] == {
        "type": "string",
        "enum": ["x", "y"],
    }
    assert json_schema_for(Any) == {}
    assert json_schema_for(type(None)) == {"type": "null"}


def test_recursive_classes_use_defs() -> None:
    schema = json_schema_for(Tree)
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert schema["$defs"]["Tree"]["properties"]["label"] == {"type": "string"}
    v = validator_for(schema)
    assert v.is_valid({"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]})
    assert not v.is_valid({"label": "a", "children": [{"label": 1}]})


def test_tags_are_required_consts() -> None:
    schema = json_schema_for(p.TextContent)
    assert schema["properties"]["type"] == {"type": "string", "const": "text"}
    assert schema["required"] == ["type", "text"]
    assert "_meta" in schema["properties"]


def test_forbidding_class_closes_the_schema() -> None:
    assert json_schema_for(Closed)["additionalProperties"] is False


def test_unsupported_types_are_rejected() -> None:
    with pytest.raises(TypeError, match="no JSON Schema mapping"):
        json_schema_for(complex)


def test_fresh_dicts() -> None:
    first = json_schema_for(SearchArgs)
    first["properties"].clear()
    assert json_schema_for(SearchArgs)["properties"]


@pytest.mark.parametrize("tp", REPRESENTATIVE, ids=lambda t: t.__name__)
def test_generated_schemas_are_valid_2020_12(tp: type) -> None:
    jsonschema.Draft202012Validator.check_schema(json_schema_for(tp))


@pytest.mark.parametrize("tp", REPRESENTATIVE, ids=lambda t: t.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_unstructured_values_validate(tp: type, data: st.DataObject) -> None:
    value = data.draw(values_of(tp))
    validator_for(json_schema_for(tp)).validate(unstructure(value))


def _accepts(value: Any, tp: type) -> bool:
    try:
        structure(value, tp)
    except cattrs.BaseValidationError:
        return False
    return True


@pytest.mark.parametrize("tp", REPRESENTATIVE, ids=lambda t: t.__name__)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_schema_agrees_with_converter(tp: type, data: st.DataObject) -> None:
    valid = unstructure(data.draw(values_of(tp)))
    candidate = data.draw(st.one_of(st.just(valid), near_misses(valid), JSON))
    schema_says = validator_for(json_schema_for(tp)).is_valid(candidate)
    assert schema_says == _accepts(candidate, tp), candidate


def test_integral_floats_agree() -> None:
    # JSON Schema's integer admits 1.0, and so does the binding (as the int 1).
    assert validator_for(json_schema_for(int)).is_valid(1.0)
    assert _accepts(1.0, int)
    assert not validator_for(json_schema_for(int)).is_valid(1.5)
    assert not _accepts(1.5, int)

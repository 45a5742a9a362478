"""The types a tool may take and return beyond attrs classes and JSON primitives:
dataclasses, TypedDict, pydantic models, dates and times, UUID, paths, Decimal, bytes;
and what ``Annotated`` metadata and docstrings add to a schema."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import pathlib
import uuid
import warnings
from typing import Annotated, Any, NotRequired, TypedDict

import annotated_types as at
import cattrs
import jsonschema
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.binding import (
    ArgumentsError,
    IgnoredMetadataWarning,
    bind_tool,
    json_schema_for,
    structure,
    unstructure,
    validator_for,
)

from ._strategies import JSON, near_misses, values_of

UTC = datetime.UTC


@dataclasses.dataclass(frozen=True)
class Point:
    """A point.

    Attributes:
        x: across
        y: down
    """

    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Person(pydantic.BaseModel):
    name: str
    born: datetime.date
    friends: list[Person] = []


class Bounded(TypedDict):
    count: Annotated[int, at.Ge(0), at.Le(10)]
    ratio: Annotated[float, pydantic.Field(gt=0, lt=1)]
    code: Annotated[str, pydantic.Field(min_length=2, max_length=4, pattern="^[a-z]+$")]
    items: Annotated[list[int], at.MaxLen(2)]
    step: Annotated[int, at.MultipleOf(5)]


SCALAR_CASES: list[tuple[Any, Any, Any, dict[str, Any]]] = [
    (
        datetime.datetime,
        "2024-05-06T07:08:09+00:00",
        datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
        {"type": "string", "format": "date-time"},
    ),
    (datetime.date, "2024-05-06", datetime.date(2024, 5, 6), {"type": "string", "format": "date"}),
    (datetime.time, "07:08:09", datetime.time(7, 8, 9), {"type": "string", "format": "time"}),
    (
        uuid.UUID,
        "12345678-1234-5678-1234-567812345678",
        uuid.UUID("12345678123456781234567812345678"),
        {"type": "string", "format": "uuid"},
    ),
    (pathlib.Path, "/tmp/x", pathlib.Path("/tmp/x"), {"type": "string"}),
    (pathlib.PurePosixPath, "a/b", pathlib.PurePosixPath("a/b"), {"type": "string"}),
    (bytes, "aGVsbG8=", b"hello", {"type": "string", "contentEncoding": "base64"}),
]


@pytest.mark.parametrize(("tp", "wire", "value", "schema"), SCALAR_CASES)
def test_string_carried_scalars(tp: Any, wire: Any, value: Any, schema: dict[str, Any]) -> None:
    assert json_schema_for(tp) == schema
    assert structure(wire, tp) == value
    assert type(structure(wire, tp)) is type(value)
    assert unstructure(value, tp) == wire
    for bad in (1, None, [], {"a": 1}, True):
        with pytest.raises(cattrs.BaseValidationError):
            structure(bad, tp)
        assert not validator_for(schema).is_valid(bad)


@pytest.mark.parametrize(
    ("tp", "bad", "message"),
    [
        (datetime.date, "2024-13-45", "expected date string"),
        (datetime.datetime, "yesterday", "expected date-time string"),
        (uuid.UUID, "not-a-uuid", "expected UUID string"),
        (bytes, "not base64!", "expected base64 string"),
        (decimal.Decimal, "1,5", "expected decimal number"),
        (decimal.Decimal, "NaN", "expected decimal number"),
    ],
)
def test_unparsable_strings_are_refused(tp: Any, bad: str, message: str) -> None:
    from trimcp.binding import format_errors

    with pytest.raises(cattrs.BaseValidationError) as info:
        structure(bad, tp)
    assert format_errors(info.value, "$") == [f"{message} @ $"]


def test_decimals_keep_every_digit() -> None:
    assert structure("0.10", decimal.Decimal) == decimal.Decimal("0.10")
    assert structure(0.1, decimal.Decimal) == decimal.Decimal("0.1")
    assert structure(3, decimal.Decimal) == decimal.Decimal(3)
    assert unstructure(decimal.Decimal("12.3400"), decimal.Decimal) == "12.3400"
    validator = validator_for(json_schema_for(decimal.Decimal))
    assert validator.is_valid("-1.5e3")
    assert validator.is_valid(2.5)
    assert not validator.is_valid("1_000")


def test_dataclasses_are_records() -> None:
    schema = json_schema_for(Point)
    assert schema == {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "description": "across"},
            "y": {"type": "integer", "description": "down", "default": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        },
        "required": ["x"],
        "additionalProperties": False,
    }
    assert structure({"x": 1}, Point) == Point(1)
    assert unstructure(Point(1, 2, ["a"])) == {"x": 1, "y": 2, "tags": ["a"]}
    with pytest.raises(cattrs.BaseValidationError):
        structure({"x": 1, "z": 2}, Point)


def test_typed_dicts_are_records() -> None:
    schema = json_schema_for(Movie)
    assert schema["required"] == ["title"]
    assert set(schema["properties"]) == {"title", "year"}
    assert structure({"title": "x"}, Movie) == {"title": "x"}
    assert unstructure({"title": "x"}, Movie) == {"title": "x"}
    assert unstructure({"title": "x", "year": 1999}, Movie) == {"title": "x", "year": 1999}
    with pytest.raises(cattrs.BaseValidationError):
        structure({"year": 1}, Movie)


def test_pydantic_models_follow_their_own_rules() -> None:
    schema = json_schema_for(Person)
    assert schema["properties"]["friends"]["items"] == {"$ref": "#/$defs/Person"}
    assert "Person" in schema["$defs"]
    jsonschema.Draft202012Validator.check_schema(schema)
    value = structure(
        {"name": "a", "born": "2000-01-02", "friends": [{"name": "b", "born": "1999-01-01"}]},
        Person,
    )
    assert value.friends[0].born == datetime.date(1999, 1, 1)
    assert unstructure(value)["born"] == "2000-01-02"
    from trimcp.binding import format_errors

    with pytest.raises(cattrs.BaseValidationError) as info:
        structure({"name": "a", "born": "x", "friends": [{"name": 1}]}, Person)
    messages = format_errors(info.value, "$.arguments.p")
    assert any(m.endswith("@ $.arguments.p.born") for m in messages)
    assert any(m.endswith("@ $.arguments.p.friends[0].name") for m in messages)
    assert any(m.endswith("@ $.arguments.p.friends[0].born") for m in messages)


def test_constraints_are_in_the_schema_and_enforced() -> None:
    schema = json_schema_for(Bounded)
    props = schema["properties"]
    assert props["count"] == {"type": "integer", "minimum": 0, "maximum": 10}
    assert props["ratio"] == {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
    assert props["code"] == {
        "type": "string",
        "minLength": 2,
        "maxLength": 4,
        "pattern": "^[a-z]+$",
    }
    assert props["items"] == {"type": "array", "items": {"type": "integer"}, "maxItems": 2}
    assert props["step"] == {"type": "integer", "multipleOf": 5}
    good = {"count": 3, "ratio": 0.5, "code": "ab", "items": [1], "step": 10}
    assert structure(good, Bounded) == good
    from trimcp.binding import format_errors

    bad = {"count": 11, "ratio": 1, "code": "ABCDE", "items": [1, 2, 3], "step": 7}
    with pytest.raises(cattrs.BaseValidationError) as info:
        structure(bad, Bounded)
    assert sorted(format_errors(info.value, "$")) == [
        "expected a multiple of 5 @ $.step",
        "expected at most 10 @ $.count",
        "expected at most 2 items @ $.items",
        "expected at most 4 characters @ $.code",
        "expected less than 1 @ $.ratio",
    ]


AGREEING = [Point, Movie, Bounded, decimal.Decimal, list[Annotated[int, at.Gt(0)]] | None]


@pytest.mark.parametrize("tp", AGREEING, ids=repr)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_schema_agrees_with_converter(tp: Any, data: st.DataObject) -> None:
    valid = unstructure(data.draw(values_of(tp)), tp)
    validator_for(json_schema_for(tp)).validate(valid)
    candidate = data.draw(st.one_of(st.just(valid), near_misses(valid), JSON))
    try:
        structure(candidate, tp)
        accepted = True
    except cattrs.BaseValidationError:
        accepted = False
    assert validator_for(json_schema_for(tp)).is_valid(candidate) == accepted, candidate


@pytest.mark.parametrize("tp", [tp for tp, *_ in SCALAR_CASES], ids=repr)
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_scalars_round_trip(tp: Any, data: st.DataObject) -> None:
    if tp is pathlib.Path:
        tp = pathlib.PurePosixPath
    value = data.draw(values_of(tp))
    wire = unstructure(value, tp)
    validator_for(json_schema_for(tp)).validate(wire)
    assert structure(json.loads(json.dumps(wire)), tp) == value


# -- tools -----------------------------------------------------------------------------


async def test_tools_take_and_return_the_new_types() -> None:
    async def plan(
        when: datetime.date,
        ident: uuid.UUID,
        where: Point,
        movie: Movie,
        who: Person,
        price: decimal.Decimal,
        blob: bytes = b"",
    ) -> dict[str, Any]:
        return {"when": when, "ident": ident, "where": where, "movie": movie, "who": who}

    binding = bind_tool(plan)
    props = binding.input_schema["properties"]
    assert props["when"] == {"type": "string", "format": "date"}
    assert props["where"]["properties"]["x"]["description"] == "across"
    assert props["who"]["properties"]["friends"]["items"] == {"$ref": "#/$defs/Person"}
    assert "Person" in binding.input_schema["$defs"]
    arguments = {
        "when": "2024-01-02",
        "ident": "12345678-1234-5678-1234-567812345678",
        "where": {"x": 1},
        "movie": {"title": "m"},
        "who": {"name": "a", "born": "2000-01-01"},
        "price": "9.99",
        "blob": "AAE=",
    }
    validator_for(binding.input_schema).validate(arguments)
    _, kwargs = binding.structure_arguments(arguments)
    assert kwargs["blob"] == b"\x00\x01"
    assert kwargs["price"] == decimal.Decimal("9.99")


async def test_structured_results_of_the_new_types() -> None:
    async def when() -> datetime.datetime:
        return datetime.datetime(2024, 1, 1, tzinfo=UTC)

    async def who() -> Person:
        return Person(name="a", born=datetime.date(2000, 1, 1))

    async def point() -> Point:
        return Point(1)

    for fn, expected in [
        (when, {"result": "2024-01-01T00:00:00+00:00"}),
        (who, {"name": "a", "born": "2000-01-01", "friends": []}),
        (point, {"x": 1, "y": 0, "tags": []}),
    ]:
        binding = bind_tool(fn)
        assert binding.output_schema is not None
        wire = binding.result_to_wire(await binding.invoke(None, {}))
        assert wire["structuredContent"] == expected
        validator_for(binding.output_schema).validate(wire["structuredContent"])


def test_docstring_parameter_descriptions() -> None:
    async def google(query: str, limit: int = 3) -> None:
        """Search.

        Args:
            query: what to look for.
            limit (int): how many
                results at most.
        """

    async def sphinx(query: str, limit: Annotated[int, "from Annotated"] = 3) -> None:
        """Search.

        :param query: what to look for.
        :param limit: ignored, Annotated wins.
        """

    for fn in (google, sphinx):
        props = bind_tool(fn).input_schema["properties"]
        assert props["query"]["description"] == "what to look for."
    assert bind_tool(google).input_schema["properties"]["limit"]["description"] == (
        "how many results at most."
    )
    assert bind_tool(sphinx).input_schema["properties"]["limit"]["description"] == (
        "from Annotated"
    )


def test_pydantic_field_metadata() -> None:
    async def tool(
        limit: Annotated[int, pydantic.Field(ge=1, description="Maximum results", title="Limit")],
    ) -> None:
        pass

    binding = bind_tool(tool)
    assert binding.input_schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "title": "Limit",
        "description": "Maximum results",
    }
    with pytest.raises(ArgumentsError, match=r"expected at least 1 @ \$\.arguments\.limit"):
        binding.structure_arguments({"limit": 0})


def test_unknown_metadata_is_reported_at_registration() -> None:
    async def tool(x: Annotated[int, at.Predicate(lambda v: v > 0), object()]) -> None:
        pass

    with pytest.warns(IgnoredMetadataWarning, match=r"tool .*tool: ignored Annotated metadata"):
        binding = bind_tool(tool)
    assert binding.input_schema["properties"]["x"] == {"type": "integer"}

    async def described(x: Annotated[int, "plain text", at.Ge(0)]) -> None:
        pass

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # understood metadata: no warning
        bind_tool(described)

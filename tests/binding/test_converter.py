"""The converter's policies: strictness, names, omission, unknown keys, errors, caching."""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar, Literal

import attrs
import cattrs
import pytest

from trimcp import protocol as p
from trimcp.binding import (
    FORBID_EXTRA,
    _plan,
    converter,
    format_errors,
    make_converter,
    structure,
    unstructure,
    wire_name,
)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"
    SLOW = "slow"


@attrs.frozen(kw_only=True)
class Inner:
    __trimcp_camel_case__: ClassVar[bool] = True  # follows the MCP vocabulary's rules
    x: int
    label: str | None = None


@attrs.frozen(kw_only=True)
class Everything:
    __trimcp_camel_case__: ClassVar[bool] = True
    text: str
    count: int
    ratio: float
    flag: bool
    nothing: None
    anything: Any
    choice: Literal["a", "b", 3]
    color: Color
    level: Level
    mode: Mode
    maybe: int | None
    number_or_text: int | str
    items: list[int]
    pair: tuple[int, str]
    many: tuple[str, ...]
    unique: set[int]
    frozen: frozenset[str]
    table: dict[str, float]
    inner: Inner
    inners: list[Inner]
    optional_inner: Inner | None = None
    described: Annotated[int, "doc"] = 0


FULL: dict[str, Any] = {
    "text": "t",
    "count": 1,
    "ratio": 0.5,
    "flag": True,
    "nothing": None,
    "anything": {"x": [1, None]},
    "choice": 3,
    "color": "red",
    "level": 2,
    "mode": "fast",
    "maybe": None,
    "numberOrText": "x",
    "items": [1, 2],
    "pair": [1, "a"],
    "many": ["a", "b"],
    "unique": [1, 2],
    "frozen": ["a"],
    "table": {"k": 1},
    "inner": {"x": 1},
    "inners": [{"x": 2, "label": "l"}],
}


def test_full_object_round_trip() -> None:
    value = structure(FULL, Everything)
    assert value.pair == (1, "a")
    assert value.unique == {1, 2}
    assert value.frozen == frozenset({"a"})
    assert value.color is Color.RED
    assert value.level is Level.HIGH
    assert value.mode is Mode.FAST
    assert value.inners == [Inner(x=2, label="l")]
    wire = unstructure(value)
    assert wire["numberOrText"] == "x"
    assert wire["pair"] == [1, "a"]
    assert wire["unique"] == [1, 2]
    assert wire["maybe"] is None  # required member: written even when None
    assert "optionalInner" not in wire  # default None: omitted
    assert wire["described"] == 0
    assert type(wire["mode"]) is str
    assert type(wire["level"]) is int
    assert structure(wire, Everything) == value


BAD: list[tuple[str, Any, str]] = [
    ("text", 1, "expected str"),
    ("text", None, "expected str"),
    ("count", True, "expected int"),
    ("count", 1.5, "expected int"),
    ("count", "1", "expected int"),
    ("ratio", True, "expected float"),
    ("ratio", "0.5", "expected float"),
    ("flag", 1, "expected bool"),
    ("flag", "true", "expected bool"),
    ("nothing", 0, "expected null"),
    ("choice", "c", "expected one of 'a', 'b', 3"),
    ("choice", 3.5, "expected one of 'a', 'b', 3"),
    ("color", "RED", "expected one of 'red', 'blue'"),
    ("level", True, "expected one of 1, 2"),
    ("level", "1", "expected one of 1, 2"),
    ("mode", "FAST", "expected one of 'fast', 'slow'"),
    ("maybe", "1", "expected int or null"),
    ("numberOrText", 1.5, "expected int or str"),
    ("numberOrText", [], "expected int or str"),
    ("items", "12", "expected list"),
    ("items", {"0": 1}, "expected list"),
    ("pair", [1], "expected list of 2 items"),
    ("pair", [1, 2, 3], "expected list of 2 items"),
    ("many", ("a",), "expected list"),
    ("unique", [1, 1], "expected unique items"),
    ("table", [], "expected object"),
    ("inner", [], "expected object"),
    ("inner", "x", "expected object"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD)
def test_no_coercion(key: str, value: Any, message: str) -> None:
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({**FULL, key: value}, Everything)
    assert format_errors(info.value, "$.params") == [f"{message} @ $.params.{key}"]


def test_integral_floats_are_integers() -> None:
    # JSON Schema's "integer" admits 5.0, so the binding does too (as the int 5).
    value = structure({**FULL, "count": 5.0, "choice": 3.0, "level": 1.0, "maybe": 2.0}, Everything)
    assert (value.count, value.choice, value.level, value.maybe) == (5, 3, Level.LOW, 2)
    assert type(value.count) is int
    assert structure([1.0, 2], list[int]) == [1, 2]
    assert structure(-0.0, int) == 0
    with pytest.raises(cattrs.BaseValidationError):
        structure(True, int)


def test_nested_error_paths() -> None:
    bad = {
        **FULL,
        "items": [1, "2", 3, None],
        "table": {"k": "v"},
        "inners": [{"x": 1}, {"label": 2}],
        "pair": [1, 2],
    }
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure(bad, Everything)
    assert sorted(format_errors(info.value, "$")) == sorted(
        [
            "expected int @ $.items[1]",
            "expected int @ $.items[3]",
            "expected str @ $.pair[1]",
            "expected float @ $.table['k']",
            "required field missing @ $.inners[1].x",
            "expected str or null @ $.inners[1].label",
        ]
    )


def test_missing_members_are_all_reported() -> None:
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({"text": "t"}, Everything)
    messages = format_errors(info.value, "$")
    assert "required field missing @ $.count" in messages
    assert "required field missing @ $.numberOrText" in messages
    assert not any("optionalInner" in m or "described" in m for m in messages)


def test_scalar_top_level_errors_are_wrapped() -> None:
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure("1", int)
    assert format_errors(info.value, "$.x") == ["expected int @ $.x"]
    with pytest.raises(cattrs.IterableValidationError):
        structure([1, "x"], list[int])


def test_format_errors_accepts_any_exception() -> None:
    assert format_errors(RuntimeError("boom"), "$") == ["invalid value (boom) @ $"]


def test_int_float_bool_and_none_pass_exactly() -> None:
    assert structure(3, float) == 3
    assert structure(2.5, float) == 2.5
    assert structure(True, bool) is True
    assert structure(None, type(None)) is None
    assert structure(None, int | None) is None
    assert structure(True, bool | int) is True
    assert structure(1, bool | int) == 1
    assert type(structure(1, int | float)) is int


def test_strict_enums_inside_unions_and_literals() -> None:
    assert structure("blue", Color | None) is Color.BLUE
    assert structure(True, Literal[True, 1]) is True
    with pytest.raises(cattrs.BaseValidationError):
        structure(True, Literal[1])
    with pytest.raises(cattrs.BaseValidationError):
        structure(1, Literal[True])


@attrs.frozen(kw_only=True)
class Strict:
    __trimcp_camel_case__: ClassVar[bool] = True
    __trimcp_forbid_extra__: ClassVar[bool] = True
    a: int


@attrs.frozen(kw_only=True)
class Lenient:
    __trimcp_forbid_extra__: ClassVar[bool] = False
    a: int


@attrs.frozen(kw_only=True)
class UserClass:
    a: int


def test_forbid_extra_keys_opt_in() -> None:
    assert FORBID_EXTRA == "__trimcp_forbid_extra__"
    assert structure({"a": 1}, Strict) == Strict(a=1)
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({"a": 1, "b": 2, "c": 3}, Strict)
    assert format_errors(info.value, "$.params") == ["unknown field(s) b, c (known: a) @ $.params"]


def test_unknown_keys_are_ignored_by_the_vocabulary() -> None:
    assert structure({"x": 1, "y": 2, "label": None}, Inner) == Inner(x=1)
    assert structure({"type": "text", "text": "t", "later": 1}, p.TextContent).text == "t"


def test_unknown_keys_are_refused_by_user_classes() -> None:
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({"a": 1, "b": 2}, UserClass)
    assert format_errors(info.value, "$") == ["unknown field(s) b (known: a) @ $"]
    assert structure({"a": 1, "b": 2}, Lenient) == Lenient(a=1)  # opted out


@attrs.frozen(kw_only=True)
class Named:
    __trimcp_camel_case__: ClassVar[bool] = True
    max_results: int
    meta: dict[str, Any] | None = None
    type_: str = "t"
    custom: int = attrs.field(default=0, metadata={p.WIRE_NAME: "x-custom"})
    _secret: int = 0
    derived: int = attrs.field(init=False, default=5)


def test_names() -> None:
    assert wire_name("structured_content") == "structuredContent"
    assert wire_name("meta") == "_meta"
    assert wire_name("type_") == "type"
    assert wire_name("a_b_c") == "aBC"
    value = Named(max_results=3, meta={"k": 1}, type_="u", custom=2, secret=9)
    wire = unstructure(value)
    assert wire == {
        "maxResults": 3,
        "_meta": {"k": 1},
        "type": "u",
        "x-custom": 2,
        "Secret": 9,
    }  # init=False members that are not tags never travel
    assert structure(wire, Named) == value


@attrs.frozen(kw_only=True)
class PythonNamed:
    max_results: int
    meta: dict[str, Any] | None = None
    type_: str = "t"
    custom: int = attrs.field(default=0, metadata={p.WIRE_NAME: "x-custom"})
    aliased: int = attrs.field(default=0, alias="renamed")
    _secret: int = 0


def test_user_classes_keep_python_names() -> None:
    value = PythonNamed(max_results=3, meta={"k": 1}, type_="u", custom=2, renamed=4, secret=9)
    wire = unstructure(value)
    assert wire == {
        "max_results": 3,
        "meta": {"k": 1},
        "type_": "u",
        "x-custom": 2,
        "renamed": 4,
        "secret": 9,
    }
    assert structure(wire, PythonNamed) == value
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({"maxResults": 3}, PythonNamed)
    assert sorted(format_errors(info.value, "$")) == [
        "required field missing @ $.max_results",
        "unknown field(s) maxResults (known: max_results, meta, renamed, secret, type_, "
        "x-custom) @ $",
    ]


@attrs.frozen(kw_only=True)
class Tree:
    value: int
    children: list[Tree] = attrs.field(factory=list)
    parent: Tree | None = None


def test_recursive_classes() -> None:
    tree = Tree(value=1, children=[Tree(value=2, children=[Tree(value=3)])], parent=Tree(value=0))
    wire = unstructure(tree)
    assert wire == {
        "value": 1,
        "children": [{"value": 2, "children": [{"value": 3, "children": []}]}],
        "parent": {"value": 0, "children": []},
    }
    assert structure(wire, Tree) == tree
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({"value": 1, "children": [{"value": "x"}]}, Tree)
    assert format_errors(info.value, "$") == ["expected int @ $.children[0].value"]


def test_bare_containers_are_walked_at_runtime() -> None:
    assert unstructure([Inner(x=1)]) == [{"x": 1}]
    assert unstructure({"k": (Inner(x=1),)}) == {"k": [{"x": 1}]}
    assert unstructure({Color.RED, Color.BLUE}, set[Color]) == ["blue", "red"]


def test_json_native_values_pass_by_reference() -> None:
    meta = {"k": [1]}
    block = structure({"type": "text", "text": "t", "_meta": meta}, p.TextContent)
    assert block.meta is meta
    assert unstructure(block)["_meta"] is meta


def test_hooks_are_generated_once() -> None:
    first = converter.get_structure_hook(Inner)
    assert converter.get_structure_hook(Inner) is first
    assert converter.get_unstructure_hook(Inner) is converter.get_unstructure_hook(Inner)


def test_make_converter_is_independent() -> None:
    other = make_converter()
    assert other is not converter
    assert other.structure({"x": 1}, Inner) == Inner(x=1)
    with pytest.raises(cattrs.BaseValidationError):
        other.structure({"x": "1"}, Inner)


@attrs.frozen(kw_only=True)
class Validated:
    n: int = attrs.field(validator=attrs.validators.ge(0))


def test_attrs_validators_failures_are_reported() -> None:
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure({"n": -1}, Validated)
    [message] = format_errors(info.value, "$")
    assert message.startswith("invalid value (")
    assert message.endswith("@ $")


def test_the_plan_cache_is_bounded() -> None:
    """Classes made at run time do not grow the plan cache past its documented bound."""
    plan_for_class = _plan.plan_for_class
    plan_for_class.cache_clear()
    classes = [attrs.make_class(f"Made{i}", {"value": attrs.field(type=int)}) for i in range(1500)]
    for cls in classes:
        assert plan_for_class(cls).fields[0].wire == "value"
    assert plan_for_class.cache_info().currsize <= 1024
    assert getattr(_plan, "PLAN_CACHE_SIZE", None) == 1024

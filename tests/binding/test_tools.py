"""bind_tool: parameter forms, context injection, errors, schemas and result shapes."""

from __future__ import annotations

import json
from typing import Annotated, Any

import attrs
import cattrs
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import protocol as p
from trimcp.binding import ArgumentsError, ToolBinding, bind_tool, validator_for

from ._strategies import JSON, near_misses


class Ctx:
    """Stands in for the server layer's ToolContext."""

    __trimcp_context__ = True


class NotContext:
    __trimcp_context__ = False


@attrs.frozen(kw_only=True)
class SearchArgs:
    query: str
    limit: int = 10
    filters: list[str] = attrs.field(factory=list)


@attrs.frozen(kw_only=True)
class Hit:
    title: str
    score: float


@attrs.frozen(kw_only=True)
class Page:
    hits: list[Hit]
    next_cursor: str | None = None


async def search(ctx: Ctx, args: SearchArgs) -> Page:
    """Search the index."""
    assert isinstance(ctx, Ctx)
    return Page(hits=[Hit(title=args.query, score=1.0)] * args.limit)


async def add(a: int, b: Annotated[int, "The second addend"] = 2, *, scale: float = 1.0) -> int:
    return int((a + b) * scale)


async def greet(name: str, ctx: Ctx, max_length: int | None = None) -> str:
    return f"hello {name}"[:max_length]


async def no_args() -> None:
    return None


def _wire_ok(value: dict[str, Any], version: str = "2025-06-18") -> None:
    """The result is a valid CallToolResult of that revision (and JSON-serialisable)."""
    json.dumps(value)
    root = json.loads(
        (
            __import__("pathlib").Path(__file__).parent.parent
            / "data"
            / "schemas"
            / version
            / "schema.json"
        ).read_text()
    )
    jsonschema.validators.validator_for(root)(
        {**root, "$ref": "#/definitions/CallToolResult"}
    ).validate(value)


async def test_a_record_parameter_is_one_argument() -> None:
    binding = bind_tool(search)
    assert isinstance(binding, ToolBinding)
    assert binding.name == "search"
    assert binding.description == "Search the index."
    assert binding.takes_context
    assert binding.input_schema == {
        "type": "object",
        "properties": {
            "args": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "default": 10},
                    "filters": {"type": "array", "items": {"type": "string"}, "default": []},
                },
                "required": ["query"],
                "additionalProperties": False,
            }
        },
        "required": ["args"],
        "additionalProperties": False,
    }
    args, kwargs = binding.structure_arguments({"args": {"query": "trio", "limit": 2}})
    assert args == ()
    assert kwargs == {"args": SearchArgs(query="trio", limit=2)}
    page = await binding.invoke(Ctx(), {"args": {"query": "q", "limit": 1}})
    assert page == Page(hits=[Hit(title="q", score=1.0)])


def test_members_given_at_the_top_level_get_a_hint() -> None:
    with pytest.raises(ArgumentsError) as info:
        bind_tool(search).structure_arguments({"query": "q", "limit": 1})
    assert info.value.messages == [
        "required field missing @ $.arguments.args",
        "unknown field(s) limit, query (known: args) @ $.arguments",
        'args is one argument: pass {"args": {"query": ..., "limit": ...}}',
    ]


async def test_plain_parameter_form() -> None:
    binding = bind_tool(add)
    assert not binding.takes_context
    assert binding.description is None
    assert binding.input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer", "description": "The second addend", "default": 2},
            "scale": {"type": "number", "default": 1.0},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert binding.structure_arguments({"a": 1}) == ((), {"a": 1})  # defaults stay Python's
    assert await binding.invoke(None, {"a": 1, "b": 3, "scale": 2}) == 8


async def test_context_anywhere_and_python_names() -> None:
    binding = bind_tool(greet)
    assert binding.takes_context
    assert set(binding.input_schema["properties"]) == {"name", "max_length"}
    assert binding.input_schema["required"] == ["name"]
    assert binding.structure_arguments({"name": "x", "max_length": 3}) == (
        (),
        {"name": "x", "max_length": 3},
    )
    assert await binding.invoke(Ctx(), {"name": "bob", "max_length": 7}) == "hello b"


def test_unknown_arguments_are_refused() -> None:
    binding = bind_tool(greet)
    assert binding.input_schema["additionalProperties"] is False
    with pytest.raises(ArgumentsError) as info:
        binding.structure_arguments({"name": "x", "maxLength": 3})
    assert info.value.messages == [
        "unknown field(s) maxLength (known: max_length, name) @ $.arguments"
    ]


async def test_positional_only_parameters() -> None:
    async def tool(ctx: Ctx, a: int, /, b: int = 5, c: int = 1) -> int:
        assert isinstance(ctx, Ctx)
        return a * 100 + b * 10 + c

    binding = bind_tool(tool)
    assert binding.structure_arguments({"a": 1, "c": 2}) == ((1,), {"c": 2})
    assert await binding.invoke(Ctx(), {"a": 1, "c": 2}) == 152


async def test_no_arguments() -> None:
    binding = bind_tool(no_args)
    assert binding.input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert binding.output_schema is None
    for arguments in (None, {}):
        assert binding.structure_arguments(arguments) == ((), {})
    with pytest.raises(ArgumentsError, match=r"unknown field\(s\) ignored \(known: none\)"):
        binding.structure_arguments({"ignored": 1})
    assert binding.result_to_wire(await binding.invoke(None, None)) == {"content": []}


def test_arguments_mapping_that_is_not_a_dict() -> None:
    from types import MappingProxyType

    binding = bind_tool(add)
    assert binding.structure_arguments(MappingProxyType({"a": 1})) == ((), {"a": 1})


@pytest.mark.parametrize(
    ("tool", "arguments", "messages"),
    [
        (search, {}, ["required field missing @ $.arguments.args"]),
        (search, {"args": {}}, ["required field missing @ $.arguments.args.query"]),
        (search, {"args": {"query": 1}}, ["expected str @ $.arguments.args.query"]),
        (
            search,
            {"args": {"query": "q", "limit": "3"}},
            ["expected int @ $.arguments.args.limit"],
        ),
        (
            search,
            {"args": {"query": "q", "limit": True}},
            ["expected int @ $.arguments.args.limit"],
        ),
        (
            search,
            {"args": {"query": "q", "filters": ["a", 2]}},
            ["expected str @ $.arguments.args.filters[1]"],
        ),
        (
            search,
            {"args": {"limit": 1.5, "filters": "a"}},
            [
                "required field missing @ $.arguments.args.query",
                "expected int @ $.arguments.args.limit",
                "expected list @ $.arguments.args.filters",
            ],
        ),
        (add, {}, ["required field missing @ $.arguments.a"]),
        (add, {"a": 1, "scale": "2"}, ["expected float @ $.arguments.scale"]),
        (add, {"a": 1.5}, ["expected int @ $.arguments.a"]),
        (
            greet,
            {"name": "x", "max_length": "3"},
            ["expected int or null @ $.arguments.max_length"],
        ),
        (add, [1, 2], ["expected object @ $.arguments"]),
        (add, "a=1", ["expected object @ $.arguments"]),
    ],
)
def test_arguments_errors(tool: Any, arguments: Any, messages: list[str]) -> None:
    binding = bind_tool(tool)
    with pytest.raises(ArgumentsError) as info:
        binding.structure_arguments(arguments)
    assert info.value.messages == messages
    assert str(info.value) == "; ".join(messages)


async def test_invoke_does_not_run_on_bad_arguments() -> None:
    ran = []

    async def tool(x: int) -> None:
        ran.append(x)

    with pytest.raises(ArgumentsError):
        await bind_tool(tool).invoke(None, {"x": "1"})
    assert ran == []


@attrs.frozen(kw_only=True)
class Nested:
    where: SearchArgs
    page: int = 1


def test_nested_argument_errors() -> None:
    async def tool(args: Nested) -> None:
        pass

    with pytest.raises(ArgumentsError) as info:
        bind_tool(tool).structure_arguments({"args": {"where": {"limit": "x"}}})
    assert info.value.messages == [
        "required field missing @ $.arguments.args.where.query",
        "expected int @ $.arguments.args.where.limit",
    ]


def test_several_parameters_one_of_them_attrs() -> None:
    async def tool(where: SearchArgs, page: int = 1) -> None:
        pass

    binding = bind_tool(tool)
    assert binding.input_schema["required"] == ["where"]
    assert binding.structure_arguments({"where": {"query": "q"}}) == (
        (),
        {"where": SearchArgs(query="q")},
    )


# -- registration errors ---------------------------------------------------------------


async def test_plain_functions_run_through_run_sync() -> None:
    ran: list[str] = []

    def tool(ctx: Ctx, a: int) -> int:
        assert isinstance(ctx, Ctx)
        return a * 2

    async def run_sync(fn: Any) -> Any:
        ran.append("thread")
        return fn()

    binding = bind_tool(tool, run_sync=run_sync)
    assert not binding.is_async
    assert binding.input_schema["properties"] == {"a": {"type": "integer"}}
    assert await binding.invoke(Ctx(), {"a": 21}) == 42
    assert ran == ["thread"]
    with pytest.raises(TypeError, match="a plain def needs run_sync"):
        bind_tool(tool)


def test_generators_are_rejected() -> None:
    def gen() -> Any:
        yield 1

    async def agen() -> Any:
        yield 1

    for fn in (gen, agen):
        with pytest.raises(TypeError, match="a generator cannot be a tool"):
            bind_tool(fn)


def test_unannotated_parameter_is_rejected() -> None:
    async def tool(a: int, b) -> None:  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(TypeError, match=r"tool .*tool: parameter 'b' has no type annotation"):
        bind_tool(tool)


def test_var_parameters_are_rejected() -> None:
    async def tool(*items: int) -> None:
        pass

    with pytest.raises(TypeError, match="parameter 'items'"):
        bind_tool(tool)

    async def tool2(**options: int) -> None:
        pass

    with pytest.raises(TypeError, match="parameter 'options'"):
        bind_tool(tool2)


def test_two_contexts_are_rejected() -> None:
    async def tool(a: Ctx, b: Ctx) -> None:
        pass

    with pytest.raises(TypeError, match="more than one context"):
        bind_tool(tool)


def test_falsy_marker_is_not_a_context() -> None:
    async def tool(x: NotContext) -> None:
        pass

    with pytest.raises(TypeError, match="no JSON Schema mapping"):
        bind_tool(tool)


def test_unresolvable_annotation_is_rejected() -> None:
    async def tool(a: DoesNotExist) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="cannot resolve annotations"):
        bind_tool(tool)


def test_unsupported_types_are_rejected() -> None:
    async def tool(when: complex) -> None:
        pass

    with pytest.raises(TypeError, match=r"tool .*tool: no JSON Schema mapping"):
        bind_tool(tool)


# -- results --------------------------------------------------------------------------


def test_text_results() -> None:
    async def tool() -> str:
        return ""

    binding = bind_tool(tool)
    assert binding.output_schema is None
    wire = binding.result_to_wire("hi")
    assert wire == {"content": [{"type": "text", "text": "hi"}]}
    _wire_ok(wire, "2024-11-05")


def test_content_results() -> None:
    async def tool() -> list[p.ContentBlock]:
        return []

    binding = bind_tool(tool)
    assert binding.output_schema is None
    image = p.ImageContent(data="AA==", mime_type="image/png")
    assert binding.result_to_wire(image) == {
        "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]
    }
    blocks = [p.TextContent(text="a"), p.ResourceLink(uri="file:///x", name="x")]
    wire = binding.result_to_wire(blocks)
    assert [b["type"] for b in wire["content"]] == ["text", "resource_link"]
    assert binding.result_to_wire([]) == {"content": []}
    assert binding.result_to_wire(None) == {"content": []}
    _wire_ok(wire)


def test_call_tool_result_passes_through() -> None:
    async def tool() -> p.CallToolResult:
        raise NotImplementedError

    binding = bind_tool(tool)
    assert binding.output_schema is None
    result = p.CallToolResult(content=[p.TextContent(text="boom")], is_error=True)
    assert binding.result_to_wire(result) == {
        "content": [{"type": "text", "text": "boom"}],
        "isError": True,
    }


def test_structured_object_results() -> None:
    binding = bind_tool(search)
    schema = binding.output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["required"] == ["hits"]
    jsonschema.Draft202012Validator.check_schema(schema)
    page = Page(hits=[Hit(title="t", score=0.5)], next_cursor="c")
    wire = binding.result_to_wire(page)
    structured = {"hits": [{"title": "t", "score": 0.5}], "next_cursor": "c"}
    assert wire["structuredContent"] == structured
    assert wire["content"] == [
        {"type": "text", "text": json.dumps(structured, separators=(",", ":"))}
    ]
    validator_for(schema).validate(wire["structuredContent"])
    _wire_ok(wire)


@pytest.mark.parametrize(
    ("annotation", "value", "inner_schema"),
    [
        (int, 3, {"type": "integer"}),
        (float, 0.5, {"type": "number"}),
        (bool, True, {"type": "boolean"}),
        (list[int], [1, 2], {"type": "array", "items": {"type": "integer"}}),
        (int | None, None, {"type": ["integer", "null"]}),
        (Hit | None, Hit(title="t", score=1), None),
    ],
)
def test_non_object_results_are_wrapped(annotation: Any, value: Any, inner_schema: Any) -> None:
    async def tool() -> None:
        pass

    tool.__annotations__["return"] = annotation
    binding = bind_tool(tool)
    schema = binding.output_schema
    assert schema is not None
    assert schema["required"] == ["result"]
    if inner_schema is not None:
        assert schema == {
            "type": "object",
            "properties": {"result": inner_schema},
            "required": ["result"],
        }
    wire = binding.result_to_wire(value)
    assert set(wire["structuredContent"]) == {"result"}
    assert json.loads(wire["content"][0]["text"]) == wire["structuredContent"]
    validator_for(schema).validate(wire["structuredContent"])
    _wire_ok(wire)


def test_dict_results_are_objects() -> None:
    async def tool() -> dict[str, int]:
        return {}

    binding = bind_tool(tool)
    assert binding.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert binding.result_to_wire({"a": 1})["structuredContent"] == {"a": 1}


@attrs.frozen(kw_only=True)
class Node:
    children: list[Node] = attrs.field(factory=list)


def test_recursive_wrapped_schema_keeps_defs_at_the_root() -> None:
    async def tool() -> list[Node]:
        return []

    schema = bind_tool(tool).output_schema
    assert schema is not None
    assert "$defs" in schema
    validator = validator_for(schema)
    assert validator.is_valid({"result": [{"children": [{"children": []}]}]})
    assert not validator.is_valid({"result": [{"children": 1}]})


def test_unannotated_results_are_written_by_runtime_class() -> None:
    async def tool():  # type: ignore[no-untyped-def]
        pass

    binding = bind_tool(tool)
    assert binding.output_schema is None
    assert binding.result_to_wire("x") == {"content": [{"type": "text", "text": "x"}]}
    assert binding.result_to_wire(None) == {"content": []}
    assert binding.result_to_wire({"a": Hit(title="t", score=1)})["structuredContent"] == {
        "a": {"title": "t", "score": 1}
    }
    assert binding.result_to_wire(7)["structuredContent"] == {"result": 7}


def test_mixed_annotations_declare_no_schema() -> None:
    async def tool() -> str | Hit:
        return ""

    binding = bind_tool(tool)
    assert binding.output_schema is None
    assert binding.result_to_wire("x") == {"content": [{"type": "text", "text": "x"}]}
    assert binding.result_to_wire(Hit(title="t", score=1))["structuredContent"] == {
        "title": "t",
        "score": 1,
    }


def test_non_ascii_text_is_kept() -> None:
    async def tool() -> dict[str, str]:
        return {}

    wire = bind_tool(tool).result_to_wire({"k": "é✓"})
    assert wire["content"][0]["text"] == '{"k":"é✓"}'


# -- agreement of the synthesised input schema with structure_arguments ---------------


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_plain_parameter_schema_agrees_with_structuring(data: st.DataObject) -> None:
    binding = bind_tool(greet)
    valid = {"name": data.draw(st.text()), "max_length": data.draw(st.none() | st.integers())}
    candidate = data.draw(st.one_of(st.just(valid), near_misses(valid), JSON))
    try:
        binding.structure_arguments(candidate if isinstance(candidate, dict) else None)
        accepted = isinstance(candidate, dict)
    except ArgumentsError:
        accepted = False
    assert validator_for(binding.input_schema).is_valid(candidate) == accepted


def test_structure_arguments_raises_only_arguments_error() -> None:
    binding = bind_tool(search)
    with pytest.raises(ArgumentsError):
        binding.structure_arguments({"query": object()})
    assert not issubclass(ArgumentsError, cattrs.BaseValidationError)


async def test_nothing_is_inspected_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    binding = bind_tool(search)
    plain = bind_tool(add)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("inspected on the call path")

    import inspect
    import typing

    monkeypatch.setattr(typing, "get_type_hints", forbidden)
    monkeypatch.setattr(inspect, "signature", forbidden)
    assert (await binding.invoke(Ctx(), {"args": {"query": "q", "limit": 0}})).hits == []
    assert await plain.invoke(None, {"a": 1}) == 3
    assert binding.result_to_wire(Page(hits=[]))["structuredContent"] == {"hits": []}


def test_an_explicit_input_schema_validates_the_arguments() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
            "extra": {"type": "integer", "minimum": 0},
        },
        "required": ["region"],
        "additionalProperties": False,
    }

    async def lookup(region: str, query: str = "") -> str:
        return f"{region}:{query}"

    binding = bind_tool(lookup, input_schema=schema)
    assert binding.input_schema == schema  # advertised as it was given
    # A key the schema allows and the function does not take is left out.
    assert binding.structure_arguments({"region": "eu", "extra": 1}) == ((), {"region": "eu"})
    with pytest.raises(ArgumentsError) as info:
        binding.structure_arguments({"extra": -1, "other": 1})
    assert sorted(info.value.messages) == sorted(
        [
            "'region' is a required property @ $.arguments",
            "Additional properties are not allowed ('other' was unexpected) @ $.arguments",
            "-1 is less than the minimum of 0 @ $.arguments.extra",
        ]
    )
    with pytest.raises(TypeError, match="not a valid JSON Schema"):
        bind_tool(lookup, input_schema={"type": 12})

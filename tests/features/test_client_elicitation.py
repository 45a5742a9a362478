"""Elicitation on the client: typed forms (primitives, the five enum shapes, defaults),
URL mode, ``notifications/elicitation/complete`` and ``-32042``."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trimcp import ElicitResult, McpError, Server, ToolContext, open_client
from trimcp.client import Elicitation, ElicitationForm, FieldKind, FormRequest, FormSchemaError
from trimcp.dispatch import UrlElicitationRequiredError
from trimcp.nursery import HandlerContext
from trimcp.protocol import ElicitParams, ElicitUrlParams
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS

from ..core._schema_check import SchemaCheck

WAIT = 30

#: One field of each kind the 2025-11-25 restricted schema allows.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "default": "Ada"},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 36},
        "score": {"type": "number", "default": 0.5},
        "ok": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]},
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y", "z"]},
            "maxItems": 2,
            "default": ["x"],
        },
        "pets": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "cat", "title": "Cat"}, {"const": "dog", "title": "Dog"}]
            },
            "minItems": 1,
        },
    },
    "required": ["name", "pets"],
}


def test_the_form_parses_every_shape() -> None:
    form = ElicitationForm.parse(SCHEMA)
    kinds = {f.name: f.kind for f in form.fields}
    assert kinds == {
        "name": FieldKind.STRING,
        "email": FieldKind.STRING,
        "age": FieldKind.INTEGER,
        "score": FieldKind.NUMBER,
        "ok": FieldKind.BOOLEAN,
        "color": FieldKind.SINGLE_SELECT,
        "size": FieldKind.SINGLE_SELECT,
        "legacy": FieldKind.SINGLE_SELECT,
        "tags": FieldKind.MULTI_SELECT,
        "pets": FieldKind.MULTI_SELECT,
    }
    assert [(o.value, o.title) for o in form.field("size").options] == [
        ("s", "Small"),
        ("l", "Large"),
    ]
    assert [o.title for o in form.field("legacy").options] == ["Alpha", "Beta"]
    assert [o.title for o in form.field("pets").options] == ["Cat", "Dog"]
    assert form.field("name").required
    assert form.field("email").format == "email"
    assert form.defaults() == {
        "name": "Ada",
        "age": 36,
        "score": 0.5,
        "ok": True,
        "color": "red",
        "tags": ["x"],
    }


def test_answers_are_checked_against_the_form() -> None:
    form = ElicitationForm.parse(SCHEMA)
    problems = form.problems(
        {"name": "", "age": 1.5, "ok": "yes", "color": "blue", "tags": ["x", "y", "z"], "zz": 1}
    )
    assert problems == [
        "zz: not a field of the form",
        "name: must be at least 1 characters",
        "age: expected an integer",
        "ok: expected a boolean",
        "color: is not one of the options",
        "tags: allows at most 2 choices",
        "pets: required",
    ]
    with pytest.raises(ValueError, match="pets: required"):
        form.complete({"name": "x"})
    assert form.complete({"pets": ["dog"]}, fill_defaults=True)["age"] == 36
    assert form.complete({"name": "B", "pets": ["cat"]}, fill_defaults=False) == {
        "name": "B",
        "pets": ["cat"],
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object", "properties": {"n": {"type": "object"}}},
        {"type": "object", "properties": {"n": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "properties": {"n": {"type": "string", "enum": [1]}}},
        {"type": "object", "properties": "nope"},
    ],
)
def test_schemas_outside_the_restriction_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(FormSchemaError):
        ElicitationForm.parse(schema)


def _server() -> Server:
    server = Server("elicit")

    @server.tool()
    async def ask(ctx: ToolContext) -> dict[str, Any]:
        result, content = await ctx.elicit("Tell me", SCHEMA)
        return {"action": result.action, "content": content}

    @server.tool()
    async def ask_bad(ctx: ToolContext) -> str:
        await ctx.elicit("Tell me", {"type": "object", "properties": {"n": {"type": "object"}}})
        return "never"

    @server.tool()
    async def visit(ctx: ToolContext) -> dict[str, Any]:
        result, elicitation_id = await ctx.elicit_url("Sign in", "https://example.com/auth")
        assert elicitation_id is not None
        ctx.detach_for_background(_finish, elicitation_id)
        return {"action": result.action, "id": elicitation_id}

    @server.tool()
    async def needs_auth(ctx: ToolContext) -> str:
        raise ctx.url_elicitation_required(
            "Authorize first", "https://example.com/oauth", elicitation_id="e-1"
        )

    return server


async def _finish(ctx: Any, elicitation_id: str) -> None:
    from trimcp.server._elicitation import complete_elicitation

    await complete_elicitation(ctx, elicitation_id)


async def test_a_typed_form_handler_gets_defaults_filled_in() -> None:
    server = _server()
    check = SchemaCheck(server)
    seen: list[FormRequest] = []

    async def form(ctx: HandlerContext, request: FormRequest) -> ElicitResult:
        seen.append(request)
        return request.accept({"pets": ["dog"], "size": "l"})

    handlers = Elicitation(form=form, fill_defaults=True)
    async with open_client(server.in_memory(), elicitation=handlers, era="handshake") as client:
        with trio.fail_after(WAIT):
            result = await client.call_tool("ask")
    assert seen[0].message == "Tell me"
    assert result.structured_content == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "age": 36,
            "score": 0.5,
            "ok": True,
            "color": "red",
            "tags": ["x"],
            "pets": ["dog"],
            "size": "l",
        },
    }
    assert check.validate("2025-11-25")["ElicitRequest"] == 1


async def test_a_plain_handler_passes_through_and_typed_answers_are_checked() -> None:
    server = _server()

    async def plain(ctx: HandlerContext, params: ElicitParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "x"})  # no pets: invalid

    async def typed(ctx: HandlerContext, request: FormRequest) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "x"})

    # A plain handler's answer passes through unchecked, as before.
    async with open_client(server.in_memory(), elicitation=plain, era="handshake") as client:
        passed = await client.call_tool("ask")
    assert passed.structured_content == {"action": "accept", "content": {"name": "x"}}
    async with open_client(
        server.in_memory(), elicitation=Elicitation(form=typed), era="handshake"
    ) as client:
        with trio.fail_after(WAIT):
            # The client does not send an answer that breaks the form: its handler's
            # failure is -32603, which the tool passes on.
            with pytest.raises(McpError) as bad_answer:
                await client.call_tool("ask")
            # A schema outside the restriction is -32602 from the client.
            with pytest.raises(McpError) as bad_schema:
                await client.call_tool("ask_bad")
    assert bad_answer.value.code == INTERNAL_ERROR
    assert bad_schema.value.code == INVALID_PARAMS
    errors: list[int] = []

    async def never(ctx: HandlerContext, request: FormRequest) -> ElicitResult:
        raise AssertionError("not called")

    async with open_client(
        server.in_memory(), elicitation=Elicitation(form=never), era="handshake"
    ) as client:
        for params in (
            {"message": "m", "requestedSchema": {"type": "object", "properties": {"n": {}}}},
            {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"},
        ):
            session = next(iter(server.sessions))
            try:
                await session.request("elicitation/create", params)
            except McpError as exc:
                errors.append(exc.code)
    assert errors == [INVALID_PARAMS, INVALID_PARAMS]


async def test_url_mode_and_the_completion_notice() -> None:
    server = _server()
    check = SchemaCheck(server)
    asked: list[ElicitUrlParams] = []
    completed: list[str] = []

    async def url(ctx: HandlerContext, params: ElicitUrlParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"ignored": True})

    async def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)

    handlers = Elicitation(url=url, on_complete=on_complete)
    async with open_client(server.in_memory(), elicitation=handlers, era="handshake") as client:
        assert client.state.client_capabilities.elicitation is not None
        assert client.state.client_capabilities.elicitation.url == {}
        with trio.fail_after(WAIT):
            result = await client.call_tool("visit")
            elicitation_id = result.structured_content["id"]
            await handlers.wait_complete(elicitation_id)
    assert result.structured_content["action"] == "accept"
    assert asked[0].url == "https://example.com/auth"
    assert asked[0].elicitation_id == elicitation_id
    assert completed == [elicitation_id]
    assert handlers.completed(elicitation_id)
    seen = check.validate("2025-11-25")
    assert seen["ElicitRequest"] == 1
    assert seen["ElicitResult"] == 0  # the client's answer is not the server's message


async def test_url_elicitation_required_reaches_the_caller_typed() -> None:
    server = _server()

    async def url(ctx: HandlerContext, params: ElicitUrlParams) -> ElicitResult:
        return ElicitResult(action="decline")

    async with open_client(
        server.in_memory(), elicitation=Elicitation(url=url), era="handshake"
    ) as client:
        with pytest.raises(UrlElicitationRequiredError) as info:
            await client.call_tool("needs_auth")
    assert info.value.elicitation_ids == ["e-1"]
    assert info.value.elicitations[0].url == "https://example.com/oauth"


async def test_form_only_and_older_revisions_declare_the_plain_capability() -> None:
    server = _server()

    async def form(ctx: HandlerContext, request: FormRequest) -> ElicitResult:
        return request.decline()

    async with open_client(
        server.in_memory(),
        elicitation=Elicitation(form=form),
        protocol_version="2025-06-18",
        era="handshake",
    ) as client:
        capability = client.state.client_capabilities.elicitation
        assert capability is not None
        assert capability.form is None
        assert capability.url is None
        result = await client.call_tool("ask")
        # No URL mode in 2025-06-18: the tool's URL elicitation fails before sending.
        with pytest.raises(McpError, match=r"elicitation\.url"):
            await client.call_tool("visit")
    # The form has multi-select fields, which 2025-06-18 lacks: the tool fails first.
    assert result.is_error

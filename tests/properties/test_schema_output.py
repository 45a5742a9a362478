"""Property: whatever a generated server is asked, everything trimcp sends (server and
client side) validates against the schema of the negotiated revision, and carries no
block or member that revision lacks.

Hypothesis draws a server (tools returning text, content blocks, structured values or
raw results, with titles, annotations, icons and ``_meta``; static resources and
templates; prompts; a tool that samples generated messages, lists roots, logs and
elicits a generated form; a page size) written in the newest vocabulary, and a list of
requests. The same server and requests are run for each of the four handshake
revisions over an in-memory pair, and each side's outbound messages are checked with
``validate(version, strict=True)``.
"""

from __future__ import annotations

import contextlib
from typing import Any

import attrs
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp import McpError, Middlewares, Root, Server, ToolContext, open_client
from trimcp import protocol as p
from trimcp.client import Elicitation, FormRequest, Sampling
from trimcp.nursery import HandlerContext
from trimcp.protocol import ContentBlock

from ..core._schema_check import HANDSHAKE, SchemaCheck
from ..protocol._strategies import values_of

LATEST = HANDSHAKE[-1]
WAIT = 30

names = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
plain_text = st.text(max_size=12)
metas = st.none() | st.dictionaries(names, st.integers() | plain_text, max_size=2)
icons = st.none() | st.lists(values_of(p.Icon, LATEST), min_size=1, max_size=2)
blocks = st.lists(values_of(ContentBlock, LATEST), min_size=1, max_size=4)


@attrs.frozen
class ToolSpec:
    kind: str
    payload: Any
    title: str | None
    annotations: p.ToolAnnotations | None
    icons: list[p.Icon] | None
    meta: dict[str, Any] | None


@attrs.frozen
class ResourceSpec:
    text: str | None
    blob: bytes | None
    title: str | None
    annotations: p.Annotations | None
    icons: list[p.Icon] | None
    meta: dict[str, Any] | None


@attrs.frozen
class ServerSpec:
    tools: list[ToolSpec]
    resources: list[ResourceSpec]
    templates: int
    prompts: list[list[p.PromptMessage]]
    page_size: int
    samples: list[p.SamplingMessage]
    form: dict[str, Any]


#: Fields a generated form may have: every shape, with defaults where one is allowed.
FORM_FIELDS: dict[str, Any] = {
    "s": {"type": "string", "title": "S", "default": "x", "maxLength": 5},
    "n": {"type": "number", "minimum": 0, "default": 1},
    "i": {"type": "integer", "description": "whole"},
    "b": {"type": "boolean", "default": True},
    "e": {"type": "string", "enum": ["a", "b"], "default": "a"},
    "t": {"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "a"},
    "l": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
    "m": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
    "mt": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
}

tool_payloads = st.one_of(
    st.tuples(st.just("text"), plain_text),
    st.tuples(st.just("blocks"), blocks),
    st.tuples(st.just("structured"), st.dictionaries(names, st.integers() | plain_text)),
    st.tuples(
        st.just("result"),
        st.builds(
            p.CallToolResult,
            content=blocks,
            is_error=st.booleans(),
            meta=metas,
        ),
    ),
)
tool_specs = st.builds(
    lambda payload, **kw: ToolSpec(kind=payload[0], payload=payload[1], **kw),
    payload=tool_payloads,
    title=st.none() | plain_text,
    annotations=st.none() | values_of(p.ToolAnnotations, LATEST),
    icons=icons,
    meta=metas,
)
resource_specs = st.builds(
    ResourceSpec,
    text=st.none() | plain_text,
    blob=st.none() | st.binary(max_size=8),
    title=st.none() | plain_text,
    annotations=st.none() | values_of(p.Annotations, LATEST),
    icons=icons,
    meta=metas,
)
server_specs = st.builds(
    ServerSpec,
    tools=st.lists(tool_specs, max_size=4),
    resources=st.lists(resource_specs, max_size=3),
    templates=st.integers(0, 2),
    prompts=st.lists(
        st.lists(values_of(p.PromptMessage, LATEST), min_size=1, max_size=3), max_size=3
    ),
    page_size=st.integers(1, 4),
    samples=st.lists(
        st.builds(
            p.SamplingMessage,
            role=st.sampled_from(["user", "assistant"]),
            content=st.one_of(
                values_of(p.TextContent, LATEST),
                values_of(p.ImageContent, LATEST),
                values_of(p.AudioContent, LATEST),
            ),
        ),
        min_size=1,
        max_size=3,
    ),
    form=st.dictionaries(
        st.sampled_from(sorted(FORM_FIELDS)),
        st.just(None),
        max_size=len(FORM_FIELDS),
    ).map(lambda chosen: {name: FORM_FIELDS[name] for name in sorted(chosen)}),
)
requests = st.lists(
    st.one_of(
        st.just(("list_all",)),
        st.tuples(st.just("call"), st.integers(0, 5)),
        st.tuples(st.just("read"), st.integers(0, 3)),
        st.tuples(st.just("read_template"), st.integers(0, 2), names),
        st.tuples(st.just("get_prompt"), st.integers(0, 3)),
        st.tuples(st.just("complete"), st.integers(0, 2), plain_text),
        st.tuples(st.just("set_level"), st.sampled_from(list(p.LoggingLevel))),
        st.just(("ping",)),
        st.just(("bad_cursor",)),
        st.just(("call", "reverse")),
    ),
    max_size=8,
)


def _tool_fn(spec: ToolSpec) -> Any:
    payload = spec.payload
    if spec.kind == "text":

        async def text() -> str:
            return payload  # type: ignore[no-any-return]

        return text
    if spec.kind == "blocks":

        async def content() -> list[ContentBlock]:
            return payload  # type: ignore[no-any-return]

        return content
    if spec.kind == "structured":

        async def structured() -> dict[str, Any]:
            return payload  # type: ignore[no-any-return]

        return structured

    async def raw() -> p.CallToolResult:
        return payload  # type: ignore[no-any-return]

    return raw


def _constant(value: Any) -> Any:
    async def read() -> Any:
        return value

    read.__annotations__["return"] = str | bytes
    return read


def _template(i: int) -> Any:
    async def item(id: str) -> str:
        return f"{i}:{id}"

    return item


async def _ids(value: str, context: Any) -> list[str]:
    return [value + "1", value + "2"]


def _prompt(messages: list[p.PromptMessage]) -> Any:
    async def prompt() -> list[p.PromptMessage]:
        return messages

    return prompt


def build(spec: ServerSpec) -> Server:
    server = Server("generated", version="1.0", title="Generated", page_size=spec.page_size)
    for i, tool in enumerate(spec.tools):
        server.tool(
            name=f"tool{i}",
            title=tool.title,
            annotations=tool.annotations,
            icons=tool.icons,
            meta=tool.meta,
        )(_tool_fn(tool))
    for i, res in enumerate(spec.resources):
        body: str | bytes = res.blob if res.blob is not None else (res.text or "")
        server.resource(
            f"gen://res/{i}",
            name=f"res{i}",
            title=res.title,
            annotations=res.annotations,
            icons=res.icons,
            meta=res.meta,
        )(_constant(body))
    for i in range(spec.templates):
        uri = f"gen{i}://item/{{id}}"
        server.resource_template(uri, name=f"tmpl{i}")(_template(i))
        server.completion("resource", uri, "id")(_ids)
    for i, messages in enumerate(spec.prompts):
        server.prompt(name=f"prompt{i}", title=f"Prompt {i}")(_prompt(messages))
    server.tool(name="reverse")(_reverse(spec))
    return server


def _reverse(spec: ServerSpec) -> Any:
    async def reverse(ctx: ToolContext) -> str:
        await ctx.sample(spec.samples, max_tokens=5)
        await ctx.list_roots()
        await ctx.log("info", {"samples": len(spec.samples)})
        await ctx.elicit("Fill in", {"type": "object", "properties": spec.form})
        return "done"

    return reverse


async def _run(client: Any, spec: ServerSpec, ops: list[tuple[Any, ...]]) -> None:
    for op in ops:
        # Errors are messages too: the recorder checks them.
        with contextlib.suppress(McpError):
            await _one(client, spec, op)


async def _one(client: Any, spec: ServerSpec, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "list_all":
        if spec.tools:
            await client.list_all_tools()
        if spec.resources or spec.templates:
            await client.list_all_resources()
            await client.list_all_resource_templates()
        if spec.prompts:
            await client.list_all_prompts()
    elif kind == "call":
        name = op[1] if isinstance(op[1], str) else f"tool{op[1]}"
        await client.call_tool(name, validate_output=False)
    elif kind == "read":
        await client.read_resource(f"gen://res/{op[1]}")
    elif kind == "read_template":
        await client.read_resource(f"gen{op[1]}://item/{op[2]}")
    elif kind == "get_prompt":
        await client.get_prompt(f"prompt{op[1]}")
    elif kind == "complete":
        ref = p.ResourceTemplateReference(uri=f"gen{op[1]}://item/{{id}}")
        await client.complete(ref, "id", op[2])
    elif kind == "set_level":
        await client.set_logging_level(op[1].value)
    elif kind == "ping":
        await client.ping()
    else:
        await client.request("tools/list", {"cursor": "not-a-cursor"})


async def _model(ctx: HandlerContext, params: p.CreateMessageParams) -> p.CreateMessageResult:
    return p.CreateMessageResult(role="assistant", content=p.TextContent(text="ok"), model="m")


async def _accept(ctx: HandlerContext, request: FormRequest) -> p.ElicitResult:
    return request.accept({})


async def _exercise(spec: ServerSpec, ops: list[tuple[Any, ...]], version: str) -> None:
    server = build(spec)
    server_side = SchemaCheck(server)
    client_side = SchemaCheck()
    middlewares = Middlewares()
    client_side.install_client(middlewares)
    with trio.fail_after(WAIT):
        async with open_client(
            server.in_memory(),
            protocol_version=version,
            middlewares=middlewares,
            sampling=Sampling(handler=_model, tools=True),
            elicitation=Elicitation(form=_accept, fill_defaults=True),
            roots=[Root(uri="file:///work", name="work")],
            era="handshake",
        ) as client:
            assert client.protocol_version == version
            await _run(client, spec, [("list_all",), *ops])
    seen = server_side.validate(version, strict=True)
    assert seen["InitializeResult"] == 1
    client_seen = client_side.validate(version, strict=True)
    assert client_seen["InitializeRequest"] == 1


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(spec=server_specs, ops=requests)
def test_everything_sent_fits_the_negotiated_revision(
    spec: ServerSpec, ops: list[tuple[Any, ...]]
) -> None:
    for version in HANDSHAKE:
        trio.run(_exercise, spec, ops, version)

"""Content written in the newest vocabulary reaches older peers in a form their revision
has: audio and resource links become text, and newer members are left out."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp import (
    AudioContent,
    CreateMessageParams,
    CreateMessageResult,
    ElicitParams,
    ElicitResult,
    EmbeddedResource,
    HandlerContext,
    ImageContent,
    PromptMessage,
    ResourceLink,
    SamplingMessage,
    Server,
    TextContent,
    TextResourceContents,
    ToolContext,
    open_client,
)
from trimcp.protocol import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, Annotations, ContentBlock, Icon
from trimcp.server._downgrade import fit_block, fit_tool_result, needs_fitting

from ..core._schema_check import HANDSHAKE, SchemaCheck

WAV = base64.b64encode(b"RIFF" + bytes(12)).decode()
ANNOTATED = Annotations(audience=["user"], priority=0.5, last_modified="2025-01-01T00:00:00Z")


def _blocks() -> list[ContentBlock]:
    return [
        TextContent(text="hello", meta={"k": 1}, annotations=ANNOTATED),
        ImageContent(data=WAV, mime_type="image/png", meta={"k": 2}),
        AudioContent(data=WAV, mime_type="audio/wav", annotations=ANNOTATED),
        ResourceLink(
            uri="notes://1",
            name="first",
            title="First note",
            description="The first one",
            icons=[Icon(src="https://example.com/i.png")],
        ),
        EmbeddedResource(resource=TextResourceContents(uri="notes://2", text="x", meta={"a": 1})),
    ]


def _server() -> Server:
    server = Server("content")

    @server.tool()
    async def everything() -> list[ContentBlock]:
        return _blocks()

    @server.prompt()
    async def show() -> list[PromptMessage]:
        return [PromptMessage(role="assistant", content=block) for block in _blocks()]

    return server


@pytest.mark.parametrize("version", HANDSHAKE)
async def test_tool_and_prompt_content_fit_each_revision(version: str) -> None:
    server = _server()
    check = SchemaCheck(server)
    async with open_client(server.in_memory(), protocol_version=version, era="handshake") as client:
        result = await client.call_tool("everything")
        prompt = await client.get_prompt("show")
    kinds = [block.type for block in result.content]
    assert kinds == [message.content.type for message in prompt.messages]
    seen = check.validate(version, strict=True)
    assert seen["CallToolResult"] == 1
    assert seen["GetPromptResult"] == 1
    audio, link = result.content[2], result.content[3]
    if version == "2024-11-05":
        assert isinstance(audio, TextContent)
        assert audio.text == "[audio omitted: audio/wav, 16 bytes]"
        assert audio.annotations == Annotations(audience=["user"], priority=0.5)
    else:
        assert isinstance(audio, AudioContent)
    if version in ("2024-11-05", "2025-03-26"):
        assert isinstance(link, TextContent)
        assert link.text == "Resource: First note <notes://1>\nThe first one"
        assert result.content[0].meta is None
    else:
        assert isinstance(link, ResourceLink)
        assert link.title == "First note"
        assert result.content[0].meta == {"k": 1}
        assert (link.icons is not None) is (version == "2025-11-25")


def test_a_block_for_the_newest_revision_is_unchanged() -> None:
    block = {"type": "audio", "data": WAV, "mimeType": "audio/wav", "_meta": {"x": 1}}
    assert fit_block("2025-11-25", block) == block
    assert fit_block("2024-11-05", "not a block") == "not a block"
    bad = fit_block("2024-11-05", {"type": "audio", "data": "%%%", "mimeType": "audio/x"})
    assert bad == {"type": "text", "text": "[audio omitted: audio/x, unknown size]"}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_sampling_messages_fit_the_revision(version: str) -> None:
    server = Server("sampler")
    check = SchemaCheck(server)
    got: list[CreateMessageParams] = []

    @server.tool()
    async def listen(ctx: ToolContext) -> str:
        message = SamplingMessage(
            role="user", content=AudioContent(data=WAV, mime_type="audio/wav")
        )
        await ctx.sample([message], max_tokens=5)
        return "ok"

    async def sampler(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        got.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="heard"), model="m")

    async with open_client(
        server.in_memory(), protocol_version=version, sampling=sampler, era="handshake"
    ) as c:
        await c.call_tool("listen")
    content = got[0].messages[0].content
    if version == "2024-11-05":
        assert content == TextContent(text="[audio omitted: audio/wav, 16 bytes]")
    else:
        assert isinstance(content, AudioContent)
    assert check.validate(version, strict=True)["CreateMessageRequest"] == 1


FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "Ada"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
    },
}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_form_schemas_fit_the_revision(version: str) -> None:
    server = Server("forms")
    check = SchemaCheck(server)
    got: list[ElicitParams] = []

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        await ctx.elicit("Pick", FORM)
        return "ok"

    @server.tool()
    async def ask_many(ctx: ToolContext) -> str:
        schema = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
        await ctx.elicit("Pick several", {"type": "object", "properties": {"tags": schema}})
        return "ok"

    async def elicit(ctx: HandlerContext, params: ElicitParams) -> ElicitResult:
        got.append(params)
        return ElicitResult(action="decline")

    async with open_client(
        server.in_memory(), protocol_version=version, elicitation=elicit, era="handshake"
    ) as c:
        await c.call_tool("ask")
        many = await c.call_tool("ask_many")
    properties = got[0].requested_schema["properties"]
    if version == "2025-06-18":
        assert properties == {
            "name": {"type": "string"},
            "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
        }
        assert many.is_error  # a multi-select cannot be asked of a 2025-06-18 client
        assert len(got) == 1
    else:
        assert properties == FORM["properties"]
        assert not many.is_error
    assert check.validate(version)["ElicitRequest"] == len(got)


_wire_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=3)}),
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": st.just("t")},
        optional={"_meta": st.just({"k": 1}), "annotations": st.just({"lastModified": "x"})},
    ),
    st.fixed_dictionaries(
        {"type": st.just("audio"), "data": st.just("AAAA"), "mimeType": st.just("audio/wav")}
    ),
    st.fixed_dictionaries(
        {"type": st.just("resource_link"), "uri": st.just("file:///a"), "name": st.just("a")},
        optional={"title": st.just("A"), "_meta": st.just({})},
    ),
    st.just("not a block"),
)


@given(st.sampled_from([*HANDSHAKE_VERSIONS, *STATELESS_VERSIONS, None]), st.lists(_wire_blocks))
def test_a_tool_result_is_fitted_block_by_block(version: str | None, content: list[Any]) -> None:
    """Whatever shortcut the result takes (plain text, the newest revision), it is what
    fitting every block says."""
    result = {"content": content, "isError": False}
    fitted = fit_tool_result(version, result)
    if version is None or not needs_fitting(version):
        assert fitted == result
    else:
        assert fitted == {**result, "content": [fit_block(version, block) for block in content]}

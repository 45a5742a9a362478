"""Prompts: declaration from signatures, listing per revision, rendering, errors,
list_changed, capabilities and the lifecycle gate. Every message the server sends is
checked against the negotiated revision's schema."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import trio

from trimcp import (
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    McpError,
    PromptMessage,
    Server,
    TextContent,
    TextResourceContents,
    ToolContext,
    open_client,
)
from trimcp.protocol import HANDSHAKE_VERSIONS, PromptArgument
from trimcp.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    ErrorResponse,
    Notification,
    Response,
)

from ._support import WAIT, Recorder, ask, raw_peer

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIA"
    "X8jx0gAAAABJRU5ErkJggg=="
)


def _server(**options: Any) -> Server:
    server = Server("s", **options)

    @server.prompt(title="Greeting")
    async def greet(
        name: Annotated[str, "Who to greet"], tone: Annotated[str, "How"] = "warm"
    ) -> str:
        """Greets someone."""
        return f"Say hello to {name}, {tone}ly."

    @server.prompt(name="mixed", description="Several kinds of messages")
    async def mixed_prompt() -> list[Any]:
        return [
            "plain text",
            ImageContent(data=PNG, mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(uri="test://r", mime_type="text/plain", text="r")
            ),
            PromptMessage(role="assistant", content=TextContent(text="I see.")),
        ]

    return server


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_list_and_get_in_every_revision(version: str) -> None:
    server = _server()
    recorder = Recorder(server)
    async with open_client(server.in_memory(), protocol_version=version, era="handshake") as client:
        assert client.state.server_capabilities.prompts is not None
        assert client.state.server_capabilities.prompts.list_changed is True
        prompts = await client.list_all_prompts()
        assert [p.name for p in prompts] == ["greet", "mixed"]
        greet = prompts[0]
        assert greet.description == "Greets someone."
        assert greet.title == ("Greeting" if version >= "2025-06-18" else None)
        assert greet.arguments == [
            PromptArgument(name="name", description="Who to greet", required=True),
            PromptArgument(name="tone", description="How", required=False),
        ]
        assert prompts[1].description == "Several kinds of messages"
        assert prompts[1].arguments is None

        result = await client.get_prompt("greet", {"name": "Ada"})
        assert result.description == "Greets someone."
        assert result.messages == [
            PromptMessage(role="user", content=TextContent(text="Say hello to Ada, warmly."))
        ]
        mixed = await client.get_prompt("mixed")
        assert [(m.role, m.content.type) for m in mixed.messages] == [
            ("user", "text"),
            ("user", "image"),
            ("user", "resource"),
            ("assistant", "text"),
        ]
    seen = recorder.validate(version)
    assert seen["ListPromptsResult"] == 1
    assert seen["GetPromptResult"] == 2


async def test_pagination_follows_cursors() -> None:
    server = Server("s", page_size=2)
    for i in range(5):

        async def body() -> str:
            return "x"

        server.prompt(name=f"p{i}", description=f"prompt {i}")(body)
    recorder = Recorder(server)
    async with open_client(server.in_memory(), era="handshake") as client:
        first = await client.list_prompts()
        assert [p.name for p in first.prompts] == ["p0", "p1"]
        assert first.next_cursor is not None
        second = await client.list_prompts(first.next_cursor)
        assert [p.name for p in second.prompts] == ["p2", "p3"]
        assert [p.name for p in await client.list_all_prompts()] == [f"p{i}" for i in range(5)]
        with pytest.raises(McpError) as bad:
            await client.list_prompts("not-a-cursor")
        assert bad.value.code == INVALID_PARAMS
    assert recorder.validate("2025-11-25")["ListPromptsResult"] == 5


async def test_get_prompt_result_passes_through_and_context_is_given() -> None:
    server = Server("s")
    seen: list[str] = []

    @server.prompt()
    async def exact(ctx: ToolContext, topic: str) -> GetPromptResult:
        """Exact."""
        seen.append(ctx.session.protocol_version or "")
        return GetPromptResult(
            description="custom",
            messages=[PromptMessage(role="assistant", content=TextContent(text=topic))],
        )

    recorder = Recorder(server)
    async with open_client(server.in_memory(), era="handshake") as client:
        [prompt] = await client.list_all_prompts()
        assert [a.name for a in prompt.arguments or []] == ["topic"]
        result = await client.get_prompt("exact", {"topic": "trio"})
    assert result.description == "custom"
    assert result.messages[0].content == TextContent(text="trio")
    assert seen == ["2025-11-25"]
    assert recorder.validate("2025-11-25")["GetPromptResult"] == 1


async def test_get_errors_name_what_is_wrong() -> None:
    server = _server()

    @server.prompt()
    async def broken() -> str:
        """Fails."""
        raise RuntimeError("secret detail")

    @server.prompt()
    async def refuses() -> str:
        """Refuses with its own error."""
        raise McpError(INVALID_PARAMS, "not today")

    recorder = Recorder(server)
    async with open_client(server.in_memory(), era="handshake") as client:
        cases: list[tuple[str, dict[str, Any] | None, int, str]] = [
            ("nope", None, INVALID_PARAMS, "nope"),
            ("greet", None, INVALID_PARAMS, "name"),
            ("greet", {"tone": "cold"}, INVALID_PARAMS, "name"),
            ("greet", {"name": "a", "extra": "b"}, INVALID_PARAMS, "extra"),
            ("broken", None, INTERNAL_ERROR, "Internal error"),
            ("refuses", None, INVALID_PARAMS, "not today"),
        ]
        for name, arguments, code, needle in cases:
            with pytest.raises(McpError) as caught:
                await client.get_prompt(name, arguments)
            assert caught.value.code == code
            assert needle in caught.value.message
            assert "secret" not in caught.value.message
        with pytest.raises(McpError) as typed:
            await client.request("prompts/get", {"name": "greet", "arguments": {"name": 3}})
        assert typed.value.code == INVALID_PARAMS
    assert recorder.validate("2025-11-25")["JSONRPCErrorResponse"] == len(cases) + 1


async def test_list_changed_on_run_time_changes() -> None:
    server = _server()
    recorder = Recorder(server)
    async with raw_peer(server) as peer:
        reply = await ask(
            peer,
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert isinstance(reply, Response)
        assert reply.result["capabilities"]["prompts"] == {"listChanged": True}
        await peer.send(Notification(method="notifications/initialized"))

        async def later() -> str:
            return "later"

        server.prompt(name="later", description="added at run time")(later)
        with trio.fail_after(WAIT):
            assert await peer.receive() == Notification(method="notifications/prompts/list_changed")
        server.remove_prompt("later")
        with trio.fail_after(WAIT):
            assert await peer.receive() == Notification(method="notifications/prompts/list_changed")
        listed = await ask(peer, 2, "prompts/list")
        assert isinstance(listed, Response)
        assert [p["name"] for p in listed.result["prompts"]] == ["greet", "mixed"]
    assert recorder.validate("2025-11-25")["PromptListChangedNotification"] == 2


async def test_no_prompts_no_capability_and_method_not_found() -> None:
    server = Server("s")
    async with open_client(server.in_memory(), era="handshake") as client:
        caps = client.state.server_capabilities
        assert caps.prompts is None
        assert caps.completions is None
        with pytest.raises(McpError) as caught:
            await client.request("prompts/list")
        assert caught.value.code == METHOD_NOT_FOUND
        with pytest.raises(McpError):
            await client.list_prompts()
    declared = Server("s", declare_prompts=True)
    async with open_client(declared.in_memory(), era="handshake") as client:
        assert client.state.server_capabilities.prompts is not None
        assert client.state.server_capabilities.completions == {}
        assert await client.list_all_prompts() == []


async def test_prompts_wait_for_initialize() -> None:
    server = _server()
    recorder = Recorder(server)
    async with raw_peer(server) as peer:
        for id, method, params in [
            (1, "prompts/list", None),
            (2, "prompts/get", {"name": "greet", "arguments": {"name": "a"}}),
            (3, "completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}}),
        ]:
            reply = await ask(peer, id, method, params)
            assert isinstance(reply, ErrorResponse)
            assert reply.error.code == INVALID_REQUEST
    assert recorder.validate("2025-11-25")["JSONRPCErrorResponse"] == 3


def test_registration_rejects_what_cannot_be_a_prompt() -> None:
    server = Server("s")

    async def untyped(count: complex) -> str:
        return str(count)

    def generator() -> Any:
        yield "x"

    async def fine(topic: str) -> str:
        return topic

    async def completer(value: str, context: Any) -> list[str]:
        return [value]

    with pytest.raises(TypeError, match="argument count: no JSON Schema mapping"):
        server.prompt()(untyped)
    with pytest.raises(TypeError, match="a generator cannot be a prompt"):
        server.prompt()(generator)
    with pytest.raises(ValueError, match="other"):
        server.prompt(complete={"other": completer})(fine)
    assert len(server.prompts) == 0

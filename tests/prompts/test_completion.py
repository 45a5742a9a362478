"""Completion: providers for prompt arguments and template variables, context
arguments per revision, the 100-value cap, unknown references, capabilities. Every
message the server sends is checked against the negotiated revision's schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from trimcp import McpError, PromptReference, ResourceTemplateReference, Server, open_client
from trimcp.protocol import HANDSHAKE_VERSIONS, Completion
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND

from ._support import Recorder

LANGUAGES = ["python", "perl", "php", "pascal", "rust"]


def _server() -> tuple[Server, list[tuple[str, dict[str, str]]]]:
    server = Server("s")
    calls: list[tuple[str, dict[str, str]]] = []

    async def language(value: str, context: Mapping[str, str]) -> list[str]:
        calls.append((value, dict(context)))
        return [name for name in LANGUAGES if name.startswith(value)]

    @server.prompt(complete={"language": language})
    async def review(language: str, style: str = "brief") -> str:
        """Reviews code."""
        return f"Review this {language} code, {style}."

    @server.completion("prompt", "review", "style")
    async def style(value: str, context: Mapping[str, str]) -> list[str]:
        return [f"{context.get('language', '?')}-{value}"]

    @server.completion("resource", "repo://{owner}/{name}", "owner")
    async def owner(value: str, context: Mapping[str, str]) -> list[str]:
        return [f"{value}{i}" for i in range(250)]

    return server, calls


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_prompt_argument_completion_in_every_revision(version: str) -> None:
    server, calls = _server()
    recorder = Recorder(server)
    ref = PromptReference(name="review")
    async with open_client(server.in_memory(), protocol_version=version, era="handshake") as client:
        if version >= "2025-03-26":
            assert client.state.server_capabilities.completions == {}
        found = await client.complete(ref, "language", "p", {"style": "long"})
        assert found == Completion(
            values=["python", "perl", "php", "pascal"], total=4, has_more=False
        )
        styled = await client.complete(ref, "style", "x", {"language": "rust"})
        # context.arguments exists from 2025-06-18 on; older revisions never see it.
        expected = "rust-x" if version >= "2025-06-18" else "?-x"
        assert styled.values == [expected]
        unknown_argument = await client.complete(ref, "nothing", "a")
        assert unknown_argument == Completion(values=[], total=0, has_more=False)
    assert calls == [("p", {"style": "long"} if version >= "2025-06-18" else {})]
    assert recorder.validate(version)["CompleteResult"] == 3


async def test_template_completion_is_capped_at_100() -> None:
    server, _ = _server()
    recorder = Recorder(server)
    async with open_client(server.in_memory(), era="handshake") as client:
        found = await client.complete(
            ResourceTemplateReference(uri="repo://{owner}/{name}"), "owner", "o"
        )
        assert len(found.values) == 100
        assert found.values[:2] == ["o0", "o1"]
        assert found.total == 250
        assert found.has_more is True
        nothing = await client.complete(ResourceTemplateReference(uri="other://{x}"), "x", "")
        assert nothing.values == []
    assert recorder.validate("2025-11-25")["CompleteResult"] == 2


async def test_provider_may_state_total_itself() -> None:
    server = Server("s")

    @server.completion("resource", "file:///{path}", "path")
    async def paths(value: str, _context: Mapping[str, str]) -> Completion:
        return Completion(values=[value + "a", value + "b"], total=1000, has_more=True)

    recorder = Recorder(server)
    async with open_client(server.in_memory(), era="handshake") as client:
        assert client.state.server_capabilities.completions == {}
        assert client.state.server_capabilities.prompts is None
        found = await client.complete(ResourceTemplateReference(uri="file:///{path}"), "path", "/")
    assert found == Completion(values=["/a", "/b"], total=1000, has_more=True)
    assert recorder.validate("2025-11-25")["CompleteResult"] == 1


async def test_unknown_prompt_and_bad_params_are_invalid_params() -> None:
    server, _ = _server()
    recorder = Recorder(server)
    async with open_client(server.in_memory(), era="handshake") as client:
        with pytest.raises(McpError) as unknown:
            await client.complete(PromptReference(name="missing"), "a", "b")
        assert unknown.value.code == INVALID_PARAMS
        assert "missing" in unknown.value.message
        bad: list[dict[str, Any]] = [
            {"ref": {"type": "ref/other", "name": "x"}, "argument": {"name": "a", "value": ""}},
            {"ref": {"type": "ref/prompt", "name": "review"}},
            {
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "a", "value": 1},
            },
        ]
        for params in bad:
            with pytest.raises(McpError) as caught:
                await client.request("completion/complete", params)
            assert caught.value.code == INVALID_PARAMS
    assert recorder.validate("2025-11-25")["JSONRPCErrorResponse"] == 1 + len(bad)


async def test_without_prompts_or_providers_there_is_no_completion() -> None:
    server = Server("s")
    async with open_client(server.in_memory(), era="handshake") as client:
        assert client.state.server_capabilities.completions is None
        with pytest.raises(McpError) as caught:
            await client.request(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "x"},
                    "argument": {"name": "a", "value": ""},
                },
            )
        assert caught.value.code == METHOD_NOT_FOUND
        with pytest.raises(McpError):
            await client.complete(PromptReference(name="x"), "a", "")


def test_completion_kind_is_checked() -> None:
    server = Server("s")

    async def provider(value: str, _context: Mapping[str, str]) -> list[str]:
        return [value]

    with pytest.raises(ValueError, match="kind"):
        server.completion("tool", "x", "y")(provider)  # type: ignore[arg-type]
    assert len(server.completions) == 0

"""Interop: the trimcp client against the official Python SDK's Streamable HTTP server.

The SDK server (``sdk_server.py``, on uvicorn) runs as a subprocess on 127.0.0.1 with a
free port, once per mode (SSE answers, JSON answers) for this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

import trimcp
from trimcp.nursery import HandlerContext

from ._sdk import served

SERVER = Path(__file__).with_name("sdk_server.py")
WAIT = 20

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")


def _start(*args: str) -> Iterator[str]:
    yield from served(SERVER, *args)


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    yield from _start()


@pytest.fixture(scope="module")
def json_url() -> Iterator[str]:
    yield from _start("json")


def text(result: trimcp.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, trimcp.TextContent)
    return first.text


async def test_tools_and_progress_over_sse(sse_url: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(WAIT):
        async with trimcp.open_client(trimcp.streamable_http(sse_url), era="handshake") as client:
            assert client.protocol_version == "2025-11-25"
            names = {tool.name for tool in await client.list_all_tools()}
            assert {"add", "progress", "sleepy", "sample", "ask"} <= names
            assert text(await client.call_tool("add", {"a": 2, "b": 40})) == "sum=42"
            done = await client.call_tool("progress", {"steps": 3}, on_progress=on_progress)
            assert text(done) == "done"
            channel = client.session.channel
            assert channel.session_id  # type: ignore[attr-defined]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_cancelled_call(sse_url: str) -> None:
    with trio.fail_after(WAIT):
        async with trimcp.open_client(trimcp.streamable_http(sse_url), era="handshake") as client:
            with trio.move_on_after(0.5) as scope:
                await client.call_tool("sleepy", {"seconds": 30})
            assert scope.cancelled_caught
            for _ in range(50):  # the server notices the notification asynchronously
                if "sleepy" in text(await client.call_tool("cancelled")):
                    break
                await trio.sleep(0.05)
            assert text(await client.call_tool("cancelled")).startswith("sleepy")
            assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "sum=2"


async def sampling(
    _ctx: HandlerContext, params: trimcp.CreateMessageParams
) -> trimcp.CreateMessageResult:
    """A fake LLM that shouts the prompt back."""
    prompt = params.messages[0].content
    assert isinstance(prompt, trimcp.TextContent)
    return trimcp.CreateMessageResult(
        role="assistant",
        content=trimcp.TextContent(text=prompt.text.upper()),
        model="fake-llm",
    )


async def test_sampling_and_elicitation_on_the_request_stream(sse_url: str) -> None:
    async def elicitation(_ctx: HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
        assert params.message == "Who are you?"
        assert "name" in params.requested_schema["properties"]
        return trimcp.ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            trimcp.streamable_http(sse_url),
            sampling=sampling,
            elicitation=elicitation,
            era="handshake",
        ) as client:
            assert text(await client.call_tool("sample", {"prompt": "hi"})) == "llm said: HI"
            assert text(await client.call_tool("ask")) == "hello Ada (36)"


async def test_json_response_mode(json_url: str) -> None:
    with trio.fail_after(WAIT):
        async with trimcp.open_client(trimcp.streamable_http(json_url), era="handshake") as client:
            assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "sum=3"
            await client.ping()


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    for url in _start("sse"):
        yield url.removesuffix("/mcp") + "/sse"


async def test_http_sse_server_of_2024_11_05_through_the_fallback(legacy_url: str) -> None:
    """The SDK's ``mcp.server.sse`` has no Streamable HTTP endpoint: POST /sse is 405, so
    ``streamable_http`` falls back to GET /sse and its endpoint event, in either era
    setting; answers, progress and reverse calls all travel on the one SSE stream."""

    seen: list[float] = []

    async def on_progress(progress: float, _total: float | None, _message: str | None) -> None:
        seen.append(progress)

    for era in ("auto", "handshake"):
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(legacy_url),
                sampling=sampling,
                era=era,  # type: ignore[arg-type]
            ) as client:
                assert client.transport_kind == "http+sse"
                assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "sum=3"
                assert text(await client.call_tool("sample", {"prompt": "abc"})) == "llm said: ABC"
                await client.call_tool("progress", {"steps": 2}, on_progress=on_progress)
                with trio.move_on_after(0.2) as scope:  # cancelled: the server is told
                    await client.call_tool("sleepy", {"seconds": 30})
                assert scope.cancelled_caught
                await client.ping()
    assert seen == [1, 2, 1, 2]
    with trio.fail_after(WAIT):
        async with trimcp.open_client(trimcp.legacy_sse(legacy_url), era="handshake") as client:
            assert client.transport_kind == "http+sse"
            assert text(await client.call_tool("add", {"a": 2, "b": 2})) == "sum=4"

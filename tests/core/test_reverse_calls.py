"""Reverse calls (sampling, elicitation, roots) linked to their forward request."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

import attrs
import pytest
import trio

from trimcp import (
    CapabilityError,
    CreateMessageParams,
    CreateMessageResult,
    ElicitParams,
    ElicitResult,
    McpError,
    Root,
    Server,
    SessionLimits,
    TextContent,
    ToolContext,
    open_client,
)
from trimcp.nursery import HandlerContext
from trimcp.wire import Message, Notification, Request

from ._schema_check import SchemaCheck
from ._support import (
    WAIT,
    RecordingTransport,
    no_leaked_tasks,
)


def _text(result: CreateMessageParams) -> str:
    content = result.messages[0].content
    assert isinstance(content, TextContent)
    return content.text


async def echo_sampler(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant", content=TextContent(text="echo: " + _text(params)), model="m"
    )


@attrs.frozen
class Person:
    name: str
    age: int


async def test_sample_elicit_and_list_roots_through_a_real_client() -> None:
    server = Server("s")
    check = SchemaCheck().install(server.middlewares)

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        sampled = await ctx.sample("hello", max_tokens=10)
        _result, person = await ctx.elicit("who?", Person)
        roots = await ctx.list_roots()
        assert isinstance(sampled.content, TextContent)
        assert person is not None
        return f"{sampled.content.text}|{person.name}:{person.age}|{roots[0].uri}"

    async def elicit(ctx: HandlerContext, params: ElicitParams) -> ElicitResult:
        assert params.message == "who?"
        assert set(params.requested_schema["properties"]) == {"name", "age"}
        return ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    async with (
        no_leaked_tasks(),
        open_client(
            server.in_memory(),
            sampling=echo_sampler,
            elicitation=elicit,
            roots=[Root(uri="file:///home/ada", name="home")],
            era="handshake",
        ) as client,
    ):
        result = await client.call_tool("ask")
        assert not result.is_error
        assert result.content[0].text == "echo: hello|Ada:36|file:///home/ada"  # type: ignore[union-attr]
    seen = check.validate("2025-11-25")
    assert seen["CreateMessageRequest"] == 1
    assert seen["ElicitRequest"] == 1
    assert seen["ListRootsRequest"] == 1


async def test_roots_handler_may_be_a_function_and_elicit_can_be_declined() -> None:
    server = Server("s")

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        result, content = await ctx.elicit("ok?", {"type": "object", "properties": {}})
        roots = await ctx.list_roots()
        return f"{result.action}:{content}:{[r.name for r in roots]}"

    async def roots(ctx: HandlerContext) -> list[Root]:
        return [Root(uri="file:///a", name="a"), Root(uri="file:///b", name="b")]

    async def decline(ctx: HandlerContext, params: ElicitParams) -> ElicitResult:
        return ElicitResult(action="decline")

    async with open_client(
        server.in_memory(), elicitation=decline, roots=roots, era="handshake"
    ) as client:
        result = await client.call_tool("ask")
        assert result.content[0].text == "decline:None:['a', 'b']"  # type: ignore[union-attr]


async def test_reverse_requests_are_sent_related_to_the_forward_request() -> None:
    server = Server("s")

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        await ctx.sample("one", max_tokens=1)
        await ctx.list_roots()
        await ctx.log("info", "working")
        return "done"

    transport = RecordingTransport(server)
    async with open_client(transport, sampling=echo_sampler, roots=[], era="handshake") as client:
        await client.call_tool("ask")
    assert transport.channel is not None
    sent = transport.channel.sent
    (forward_id,) = [
        m.id
        for m, _ in sent
        if not isinstance(m, Request | Notification) and "content" in getattr(m, "result", {})
    ]
    reverse = [(m, rel) for m, rel in sent if isinstance(m, Request)]
    assert [m.method for m, _ in reverse] == ["sampling/createMessage", "roots/list"]
    assert all(rel == forward_id for _, rel in reverse)
    notes = [(m, rel) for m, rel in sent if isinstance(m, Notification)]
    assert [(m.method, rel) for m, rel in notes] == [("notifications/message", forward_id)]
    responses = [(m, rel) for m, rel in sent if not isinstance(m, Request | Notification)]
    assert all(rel == m.id for m, rel in responses)  # every answer goes with its request


async def test_several_reverse_calls_from_one_handler_overlap() -> None:
    server = Server("s")
    arrived = {"a": trio.Event(), "b": trio.Event()}

    @server.tool()
    async def both(ctx: ToolContext) -> str:
        answers: dict[str, str] = {}

        async def one(text: str) -> None:
            result = await ctx.sample(text, max_tokens=1)
            assert isinstance(result.content, TextContent)
            answers[text] = result.content.text

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one, "a")
            nursery.start_soon(one, "b")
        return answers["a"] + answers["b"]

    async def waits_for_the_other(
        ctx: HandlerContext, params: CreateMessageParams
    ) -> CreateMessageResult:
        mine = _text(params)
        other = "b" if mine == "a" else "a"
        arrived[mine].set()
        await arrived[other].wait()  # deadlocks unless both are outstanding at once
        return CreateMessageResult(role="assistant", content=TextContent(text=mine), model="m")

    with trio.fail_after(WAIT):
        async with open_client(
            server.in_memory(), sampling=waits_for_the_other, era="handshake"
        ) as client:
            result = await client.call_tool("both")
    assert result.content[0].text == "ab"  # type: ignore[union-attr]


async def test_reverse_calls_without_the_client_capability_raise_capability_error() -> None:
    server = Server("s")
    sent: list[Message] = []

    async def record(message: Message, call_next: Any) -> None:
        sent.append(message)
        await call_next(message)

    server.middlewares.server_send.add(record)

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        missing = []
        for attempt in (
            lambda: ctx.sample("x", max_tokens=1),
            lambda: ctx.elicit("x", {"type": "object"}),
            lambda: ctx.list_roots(),
        ):
            try:
                await attempt()
            except CapabilityError as exc:
                missing.append(f"{exc.capability}:{exc.code}")
        return ",".join(missing)

    async with open_client(server.in_memory(), era="handshake") as client:
        result = await client.call_tool("ask")
    assert result.content[0].text == "sampling:-32021,elicitation:-32021,roots:-32021"  # type: ignore[union-attr]
    assert not any(isinstance(m, Request) for m in sent)  # nothing was asked of the client


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_tool_needing_a_missing_capability_is_answered_32021_in_both_eras(
    era: Literal["handshake", "stateless"],
) -> None:
    """Never -32601 for a method that exists: the client reads which capability is
    missing from ``data.requiredCapabilities``."""
    server = Server("s")

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        result, _ = await ctx.elicit("Name?", {"type": "object"})
        return result.action

    async with open_client(server.in_memory(), era=era) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("ask")
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}
    assert "elicitation" in caught.value.message


async def test_reverse_calls_are_bounded_by_max_reverse_calls() -> None:
    server = Server("s", limits=SessionLimits(max_reverse_calls=2))
    running = 0
    peak = 0

    @server.tool()
    async def fan(ctx: ToolContext) -> str:
        async with trio.open_nursery() as nursery:
            for i in range(5):
                nursery.start_soon(partial(ctx.sample, f"q{i}", max_tokens=1))
        return "done"

    async def counting(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await trio.testing.wait_all_tasks_blocked()
        running -= 1
        return CreateMessageResult(role="assistant", content=TextContent(text="a"), model="m")

    with trio.fail_after(WAIT):
        async with open_client(server.in_memory(), sampling=counting, era="handshake") as client:
            result = await client.call_tool("fan")
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    assert peak == 2

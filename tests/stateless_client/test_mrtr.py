"""MRTR on the client: input rounds answered through the client's own handlers."""

from __future__ import annotations

from typing import Any

import pytest
import trio

import trimcp
from trimcp.dispatch import Middlewares
from trimcp.wire import Message, Request

from ._peer import DISCOVER, Err, ScriptedPeer, check_client_message

WAIT = 10
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def build() -> trimcp.Server:
    server = trimcp.Server("mrtr", version="1")

    @server.tool()
    async def two_rounds(ctx: trimcp.ToolContext) -> str:
        _answer, content = await ctx.elicit("Name?", SCHEMA)
        reply = await ctx.sample(f"greet {content and content['name']}", max_tokens=10)
        assert isinstance(reply.content, trimcp.TextContent)
        return f"{content and content['name']}: {reply.content.text}"

    @server.tool()
    async def together(ctx: trimcp.ToolContext) -> str:
        found: dict[str, Any] = {}

        async def ask() -> None:
            found["who"] = (await ctx.elicit("Who?", SCHEMA))[1]

        async def roots() -> None:
            found["roots"] = [root.uri for root in await ctx.list_roots()]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask)
            nursery.start_soon(roots)
        return f"{found['who']['name']} in {found['roots']}"

    @server.resource("test://secret", mime_type="text/plain")
    async def secret(ctx: trimcp.ToolContext) -> str:
        _answer, content = await ctx.elicit("Password?", SCHEMA)
        return f"secret for {content and content['name']}"

    @server.prompt()
    async def greeting(ctx: trimcp.ToolContext) -> str:
        _answer, content = await ctx.elicit("Name?", SCHEMA)
        return f"Hello {content and content['name']}"

    return server


class Handlers:
    """The client's handlers, counting their calls (the same ones serve both eras)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def elicit(
        self, _ctx: trimcp.HandlerContext, params: trimcp.ElicitParams
    ) -> trimcp.ElicitResult:
        self.calls.append(f"elicit:{params.message}")
        return trimcp.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(
        self, _ctx: trimcp.HandlerContext, params: trimcp.CreateMessageParams
    ) -> trimcp.CreateMessageResult:
        self.calls.append("sample")
        return trimcp.CreateMessageResult(
            role="assistant", content=trimcp.TextContent(text="hi!"), model="m"
        )


def recorder(sent: list[Message]) -> Middlewares:
    middlewares = Middlewares()

    @middlewares.client_send.add
    async def record(message: Message, call_next: Any) -> None:
        sent.append(message)
        await call_next(message)

    return middlewares


async def open_stateless(server: trimcp.Server, handlers: Handlers, sent: list[Message]) -> Any:
    return trimcp.open_client(
        server.in_memory(),
        era="stateless",
        elicitation=handlers.elicit,
        sampling=handlers.sample,
        roots=[trimcp.Root(uri="file:///work")],
        middlewares=recorder(sent),
    )


@pytest.mark.parametrize("era", ["stateless", "handshake"])
async def test_the_same_handlers_serve_both_eras(era: str) -> None:
    handlers = Handlers()
    sent: list[Message] = []
    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            build().in_memory(),
            era=era,  # type: ignore[arg-type]
            elicitation=handlers.elicit,
            sampling=handlers.sample,
            roots=[trimcp.Root(uri="file:///work")],
            middlewares=recorder(sent),
        ) as client:
            assert client.stateless is (era == "stateless")
            result = await client.call_tool("two_rounds")
            assert result.content[0] == trimcp.TextContent(text="Ada: hi!")
            together = await client.call_tool("together")
            assert together.content[0] == trimcp.TextContent(text="Ada in ['file:///work']")
            prompt = await client.get_prompt("greeting")
            assert "Hello Ada" in str(prompt.messages[0].content)
            read = await client.read_resource("test://secret")
            assert getattr(read.contents[0], "text", None) == "secret for Ada"
    assert handlers.calls.count("sample") == 1
    calls = [m for m in sent if isinstance(m, Request) and m.method == "tools/call"]
    if era == "stateless":
        # two_rounds: 1 + 2 retries; together: 1 + 1 retry (both inputs in one round)
        assert len(calls) == 5
        assert len({m.id for m in calls}) == 5
        for message in sent:
            if isinstance(message, Request):
                check_client_message(message)
        first, retry = calls[0].params or {}, calls[1].params or {}
        assert "inputResponses" not in first
        assert "requestState" not in first
        assert isinstance(retry["requestState"], str)
        assert len(retry["inputResponses"]) == 1
        assert len((calls[4].params or {})["inputResponses"]) == 2
        for method in ("resources/read", "prompts/get"):
            sent_for = [m for m in sent if isinstance(m, Request) and m.method == method]
            assert len(sent_for) == 2
            assert sent_for[0].id != sent_for[1].id
            assert "inputResponses" in (sent_for[1].params or {})
    else:
        assert len(calls) == 2


def scripted(rounds: int, *, state: bool = True, result_type: bool = True) -> ScriptedPeer:
    """A server asking for input ``rounds`` times before completing."""
    seen: dict[str, int] = {"calls": 0}

    async def script(request: Request) -> dict[str, Any] | Err | None:
        if request.method == "server/discover":
            return DISCOVER
        if request.method == "tools/list":
            return {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
        if request.method != "tools/call":
            return Err(-32601, "Method not found")
        seen["calls"] += 1
        if seen["calls"] <= rounds:
            answer: dict[str, Any] = {
                "resultType": "input_required",
                "inputRequests": {
                    "q": {
                        "method": "elicitation/create",
                        "params": {"message": f"round {seen['calls']}", "requestedSchema": SCHEMA},
                    }
                },
            }
            if state:
                answer["requestState"] = f"opaque-{seen['calls']}=="
            return answer
        done: dict[str, Any] = {"content": [{"type": "text", "text": "done"}]}
        if result_type:
            done["resultType"] = "complete"
        return done

    return ScriptedPeer(script)


async def test_several_rounds_echo_the_state_exactly() -> None:
    peer = scripted(3)
    handlers = Handlers()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(peer, era="stateless", elicitation=handlers.elicit) as c:
            result = await c.call_tool("t", {"x": 1})
            assert result.content[0] == trimcp.TextContent(text="done")
    calls = peer.requests("tools/call")
    assert len(calls) == 4
    assert [(m.params or {}).get("requestState") for m in calls] == [
        None,
        "opaque-1==",
        "opaque-2==",
        "opaque-3==",
    ]
    for message in calls:
        check_client_message(message)
        assert (message.params or {})["arguments"] == {"x": 1}
    assert handlers.calls == ["elicit:round 1", "elicit:round 2", "elicit:round 3"]


async def test_no_state_means_none_sent_back_and_no_result_type_means_complete() -> None:
    peer = scripted(1, state=False, result_type=False)
    handlers = Handlers()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(peer, era="stateless", elicitation=handlers.elicit) as c:
            result = await c.call_tool("t")
            assert result.content[0] == trimcp.TextContent(text="done")
    retry = peer.requests("tools/call")[1].params or {}
    assert "requestState" not in retry
    assert retry["inputResponses"] == {"q": {"action": "accept", "content": {"name": "Ada"}}}


async def test_the_round_bound_is_enforced() -> None:
    peer = scripted(100)
    handlers = Handlers()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            peer, era="stateless", elicitation=handlers.elicit, max_input_rounds=2
        ) as c:
            with pytest.raises(trimcp.InputRoundsExceeded, match="after 2 rounds"):
                await c.call_tool("t")
            assert len(peer.requests("tools/call")) == 3
            # the client is still usable afterwards
            assert await c.list_all_tools() == []


async def test_an_input_without_a_handler_is_an_error() -> None:
    peer = scripted(1)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(peer, era="stateless") as c:
            with pytest.raises(trimcp.McpError, match="no handler"):
                await c.call_tool("t")
    assert len(peer.requests("tools/call")) == 1

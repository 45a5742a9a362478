"""End to end: the trimcp HTTP client against trimcp's own Streamable HTTP server."""

from __future__ import annotations

from functools import partial

import trio

import trimcp
from trimcp.nursery import HandlerContext
from trimcp.transports.http import MemoryEventStore

WAIT = 20


def build() -> trimcp.Server:
    server = trimcp.Server("own", version="1")

    @server.tool()
    async def add(a: int, b: int) -> str:
        return f"sum={a + b}"

    @server.tool()
    async def steps(ctx: trimcp.ToolContext, n: int) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return "stepped"

    @server.tool()
    async def poll(ctx: trimcp.ToolContext) -> str:
        await ctx.report_progress(1, 2)
        assert await trimcp.close_sse_stream(ctx, retry_ms=200)
        await trio.sleep(0.3)
        await ctx.report_progress(2, 2)
        return "after the reconnect"

    @server.tool()
    async def ask(ctx: trimcp.ToolContext) -> str:
        answer, content = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hi {content['name']}" if answer.action == "accept" and content else "nobody"

    return server


async def test_tools_progress_polling_and_elicitation(engine: str) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, _total: float | None, _message: str | None) -> None:
        seen.append(progress)

    async def elicitation(_ctx: HandlerContext, _p: trimcp.ElicitParams) -> trimcp.ElicitResult:
        return trimcp.ElicitResult(action="accept", content={"name": "Bo"})

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            serve = partial(
                trimcp.serve_http,
                build(),
                port=0,
                engine=engine,
                event_store=lambda: MemoryEventStore(),
            )
            port = await nursery.start(serve)
            url = f"http://127.0.0.1:{port}/mcp"
            async with trimcp.open_client(
                trimcp.streamable_http(url), elicitation=elicitation, era="handshake"
            ) as client:
                answer = await client.call_tool("add", {"a": 2, "b": 3})
                assert answer.content[0] == trimcp.TextContent(text="sum=5")
                stepped = await client.call_tool("steps", {"n": 3}, on_progress=on_progress)
                assert stepped.content[0] == trimcp.TextContent(text="stepped")
                polled = await client.call_tool("poll", on_progress=on_progress)
                assert polled.content[0] == trimcp.TextContent(text="after the reconnect")
                asked = await client.call_tool("ask")
                assert asked.content[0] == trimcp.TextContent(text="hi Bo")
                channel = client.session.channel
                assert channel.sse.get_requests >= 2  # type: ignore[attr-defined]
            nursery.cancel_scope.cancel()
    assert seen == [1, 2, 3, 1, 2]


async def test_a_core_task_over_http_asks_through_tasks_result(engine: str) -> None:
    """2025-11-25 core tasks over Streamable HTTP: the task's elicitation travels on the
    tasks/result POST's stream, status notices on the GET stream, and the task outlives
    the POST that created it."""
    server = build()
    notices: list[str] = []

    @server.tool(task_support="required")
    async def survey(ctx: trimcp.ToolContext) -> str:
        await trio.sleep(0.1)
        answer, content = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"surveyed {content['name']}" if content else answer.action

    async def elicitation(_ctx: HandlerContext, _p: trimcp.ElicitParams) -> trimcp.ElicitResult:
        return trimcp.ElicitResult(action="accept", content={"name": "Cy"})

    async def listen(message: trimcp.wire.Message, call_next: object) -> None:
        if isinstance(message, trimcp.wire.Notification):
            notices.append(message.method)
        await call_next(message)  # type: ignore[operator]

    middlewares = trimcp.dispatch.Middlewares()
    middlewares.client_recv.add(listen)
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            serve = partial(trimcp.serve_http, server, port=0, engine=engine)
            port = await nursery.start(serve)
            async with trimcp.open_client(
                trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp"),
                elicitation=elicitation,
                middlewares=middlewares,
                era="handshake",
            ) as client:
                result = await client.call_tool("survey")
                assert result.content[0] == trimcp.TextContent(text="surveyed Cy")
                (task,) = await client.tasks.list_all()
                assert task.status == "completed"
            nursery.cancel_scope.cancel()
    assert "notifications/tasks/status" in notices

"""The four middleware stacks: onion order, direction, dropping and replacing."""

from __future__ import annotations

from typing import Any

import trio

from trimcp import (
    CreateMessageParams,
    CreateMessageResult,
    Server,
    TextContent,
    ToolContext,
    open_client,
)
from trimcp.dispatch import CallNext, Middleware, Middlewares, MiddlewareStack
from trimcp.nursery import HandlerContext
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response

from ._support import served


def kind(message: Message) -> str:
    if isinstance(message, Request):
        return f"request {message.method}"
    if isinstance(message, Notification):
        return f"notification {message.method}"
    if isinstance(message, ErrorResponse):
        return "error"
    return "response"


def recorder(log: list[str], label: str) -> Middleware:
    async def middleware(message: Message, call_next: CallNext) -> None:
        log.append(f"{label} in: {kind(message)}")
        await call_next(message)
        log.append(f"{label} out: {kind(message)}")

    return middleware


async def test_stacks_compose_like_an_onion_in_registration_order() -> None:
    server = Server("s")
    log: list[str] = []
    for stack in (server.middlewares.server_recv, server.middlewares.server_send):
        stack.add(recorder(log, f"{stack.name} A"))
        stack.add(recorder(log, f"{stack.name} B"))
    async with served(server, initialize=False) as (peer, _session):
        assert await peer.request(1, "ping") == Response(id=1, result={})
    # The request is handled in its own task, so the receive chain has unwound before
    # the response starts down the send chain.
    assert log == [
        "server_recv A in: request ping",
        "server_recv B in: request ping",
        "server_recv B out: request ping",
        "server_recv A out: request ping",
        "server_send A in: response",
        "server_send B in: response",
        "server_send B out: response",
        "server_send A out: response",
    ]


async def test_a_middleware_added_as_a_decorator_and_removed_again() -> None:
    server = Server("s")
    log: list[str] = []

    @server.middlewares.server_recv.add
    async def first(message: Message, call_next: CallNext) -> None:
        log.append("first")
        await call_next(message)

    second = server.middlewares.server_recv.add(recorder(log, "second"))
    server.middlewares.server_recv.remove(second)
    assert len(server.middlewares.server_recv) == 1
    async with served(server, initialize=False) as (peer, _session):
        await peer.request(1, "ping")
    assert log == ["first"]


def _sampling_tool_server() -> Server:
    server = Server("s")

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        await ctx.report_progress(1, 2)
        result = await ctx.sample("q", max_tokens=1)
        assert isinstance(result.content, TextContent)
        return result.content.text

    return server


async def sampler(ctx: HandlerContext, params: CreateMessageParams) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="a"), model="m")


async def test_stacks_are_named_by_direction_on_both_sides() -> None:
    server = _sampling_tool_server()
    logs: dict[str, list[str]] = {}
    client_mw = Middlewares()

    def watch(stack: Any) -> None:
        log = logs.setdefault(stack.name, [])

        async def middleware(message: Message, call_next: CallNext) -> None:
            log.append(kind(message))
            await call_next(message)

        stack.add(middleware)

    watch(server.middlewares.server_recv)
    watch(server.middlewares.server_send)
    watch(client_mw.client_send)
    watch(client_mw.client_recv)

    async def progress(p: float, t: float | None, m: str | None) -> None:
        pass

    async with open_client(
        server.in_memory(), sampling=sampler, middlewares=client_mw, era="handshake"
    ) as c:
        await c.call_tool("ask", on_progress=progress)
    # Server: inbound requests, notifications and answers to reverse calls come in ...
    assert logs["server_recv"] == [
        "request initialize",
        "notification notifications/initialized",
        "request tools/call",
        "response",  # the client's answer to sampling/createMessage
    ]
    # ... responses, notifications and reverse-call requests go out.
    assert logs["server_send"] == [
        "response",
        "notification notifications/progress",
        "request sampling/createMessage",
        "response",
    ]
    # The client mirrors it.
    assert logs["client_send"] == logs["server_recv"]
    assert logs["client_recv"] == logs["server_send"]
    # Nothing passes the other role's stacks.
    assert len(server.middlewares.client_send) == 0
    assert len(client_mw.server_send) == 0


async def test_a_server_recv_middleware_can_drop_a_request() -> None:
    server = Server("s")
    dropped: list[Any] = []

    @server.middlewares.server_recv.add
    async def deny(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request) and message.method == "ping":
            dropped.append(message.id)
            return
        await call_next(message)

    async with served(server) as (peer, session):
        await peer.send(Request(id=9, method="ping"))
        assert await peer.quiet_drain() == []
        assert dropped == [9]
        assert session.in_flight == 0
        reply = await peer.request(10, "tools/list")  # everything else still flows
        assert isinstance(reply, ErrorResponse)  # (this server has no tools)


async def test_a_server_send_middleware_can_drop_notifications() -> None:
    server = Server("s")

    @server.tool()
    async def chatty(ctx: ToolContext) -> str:
        await ctx.log("info", "noise")
        return "quiet"

    @server.middlewares.server_send.add
    async def mute(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Notification) and message.method == "notifications/message":
            return
        await call_next(message)

    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async with open_client(server.in_memory(), on_log=on_log, era="handshake") as client:
        result = await client.call_tool("chatty")
        await trio.testing.wait_all_tasks_blocked()
    assert result.content[0].text == "quiet"  # type: ignore[union-attr]
    assert logs == []


async def test_middleware_can_replace_messages_both_ways() -> None:
    server = Server("s")

    @server.tool()
    async def greet(name: str) -> str:
        return f"hello {name}"

    @server.middlewares.server_recv.add
    async def rename(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request) and message.method == "tools/call":
            assert message.params is not None
            message = Request(
                id=message.id,
                method=message.method,
                params={**message.params, "arguments": {"name": "middleware"}},
            )
        await call_next(message)

    client_mw = Middlewares()

    @client_mw.client_recv.add
    async def shout(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Response) and "content" in message.result:
            text = message.result["content"][0]["text"]
            message = Response(
                id=message.id, result={"content": [{"type": "text", "text": text.upper()}]}
            )
        await call_next(message)

    async with open_client(server.in_memory(), middlewares=client_mw, era="handshake") as client:
        result = await client.call_tool("greet", {"name": "ada"})
    assert result.content[0].text == "HELLO MIDDLEWARE"  # type: ignore[union-attr]


async def test_a_client_send_middleware_can_add_meta_to_every_request() -> None:
    server = Server("s")
    seen_meta: list[Any] = []

    @server.tool()
    async def meta(ctx: ToolContext) -> str:
        seen_meta.append(ctx.meta)
        return "ok"

    client_mw = Middlewares()

    @client_mw.client_send.add
    async def tag(message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request):
            params = dict(message.params or {})
            params["_meta"] = {**params.get("_meta", {}), "trace": "t-1"}
            message = Request(id=message.id, method=message.method, params=params)
        await call_next(message)

    async with open_client(server.in_memory(), middlewares=client_mw, era="handshake") as client:
        await client.call_tool("meta")
    assert seen_meta == [{"trace": "t-1"}]


async def test_a_message_held_in_the_stack_keeps_one_frame_per_middleware() -> None:
    # A sender queued on the transport (a thousand at once in a burst) keeps its
    # middleware frames alive: one each, plus the terminal's; no per-layer glue.
    stack = MiddlewareStack("client_send")
    log: list[str] = []
    for label in ("outer", "middle", "inner"):
        stack.add(recorder(log, label))
    gate = trio.Event()
    seen: list[tuple[Message, object]] = []

    async def terminal(message: Message, related: object) -> None:
        seen.append((message, related))
        await gate.wait()

    chain = stack.compose(terminal)
    note = Notification(method="notifications/message", params={})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(chain, note, 7)
        await trio.testing.wait_all_tasks_blocked()
        [task] = nursery.child_tasks
        frames = []
        awaited: Any = task.coro
        while awaited is not None and hasattr(awaited, "cr_frame"):
            frames.append(awaited.cr_frame.f_code.co_name)
            awaited = awaited.cr_await
        # (Trio's own frames below the gate's wait are its business.)
        assert frames[:5] == ["middleware", "middleware", "middleware", "terminal", "wait"]
        gate.set()
    assert seen == [(note, 7)]
    assert log == [
        "outer in: notification notifications/message",
        "middle in: notification notifications/message",
        "inner in: notification notifications/message",
        "inner out: notification notifications/message",
        "middle out: notification notifications/message",
        "outer out: notification notifications/message",
    ]


async def test_middleware_added_or_removed_while_sessions_run_applies_at_once() -> None:
    """Both live sessions are recomposed when a stack changes, on the server's stacks
    and on the stacks a client was given; an ended session stops watching."""
    server = Server("s")
    log: list[str] = []
    user = Middlewares()
    async with (
        served(server) as (peer, session),
        open_client(server.in_memory(), middlewares=user, era="handshake") as client,
    ):
        await peer.request(1, "ping")
        await client.ping()
        assert log == []
        late = server.middlewares.server_recv.add(recorder(log, "server late"))
        client_late = user.client_send.add(recorder(log, "client late"))
        await peer.request(2, "ping")
        await client.ping()
        assert sorted(log) == [
            "client late in: request ping",
            "client late out: request ping",
            *["server late in: request ping"] * 2,
            *["server late out: request ping"] * 2,
        ]
        log.clear()
        server.middlewares.server_recv.remove(late)
        user.client_send.remove(client_late)
        await peer.request(3, "ping")
        await client.ping()
        assert log == []
    assert session.is_closed
    assert not server.middlewares.server_recv._watchers
    assert not user.client_send._watchers

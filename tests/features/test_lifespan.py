"""``Server(lifespan=...)``: entered once per serving, its state on every handler context
(tools, resources, prompts, detached work), exited after the last session; and the HTTP
request headers on the handler context."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

import trimcp
from trimcp.server import Server

WAIT = 30


def _text(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


class Recorder:
    """A lifespan that records what happens and yields a fresh state per serving."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.servings = 0

    @asynccontextmanager
    async def __call__(self, server: Server) -> AsyncIterator[dict[str, Any]]:
        self.servings += 1
        number = self.servings
        self.events.append(f"enter {number}")
        try:
            yield {"serving": number, "server": server.info.name}
        finally:
            await trio.lowlevel.checkpoint()  # cleanup that awaits, even when cancelled
            self.events.append(f"exit {number}")


def _server(lifespan: Any) -> Server:
    server = Server("life", lifespan=lifespan)
    detached: list[Any] = []
    server.test_detached = detached  # type: ignore[attr-defined]

    @server.tool()
    async def state(ctx: trimcp.ToolContext) -> str:
        return repr(ctx.lifespan_state)

    @server.tool()
    def state_in_thread(ctx: trimcp.ToolContext) -> str:
        return repr(ctx.lifespan_state)

    @server.tool()
    async def detach(ctx: trimcp.ToolContext) -> str:
        async def later(background: Any) -> None:
            detached.append(ctx.lifespan_state)

        ctx.detach_for_background(later)
        return "detached"

    @server.tool()
    async def headers(ctx: trimcp.ToolContext) -> str:
        found = ctx.headers
        return "none" if found is None else found.get("x-tenant", "-")

    @server.resource("test://state")
    async def resource(ctx: trimcp.ToolContext) -> str:
        return repr(ctx.lifespan_state)

    @server.prompt()
    async def prompt(ctx: trimcp.ToolContext) -> str:
        return repr(ctx.lifespan_state)

    return server


async def test_in_memory_connections_run_the_lifespan() -> None:
    recorder = Recorder()
    server = _server(recorder)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            assert recorder.events == ["enter 1"]
            expected = repr({"serving": 1, "server": "life"})
            assert _text(await client.call_tool("state", {})) == expected
            assert _text(await client.call_tool("state_in_thread", {})) == expected
            read = await client.read_resource("test://state")
            assert read.contents[0].text == expected  # type: ignore[union-attr]
            prompt = await client.get_prompt("prompt")
            assert prompt.messages[0].content.text == expected  # type: ignore[union-attr]
            await client.call_tool("detach", {})
            await trio.testing.wait_all_tasks_blocked()
            assert server.test_detached == [{"serving": 1, "server": "life"}]  # type: ignore[attr-defined]
            assert _text(await client.call_tool("headers", {})) == "none"
        assert recorder.events == ["enter 1", "exit 1"]


async def test_each_serving_sees_its_own_state() -> None:
    recorder = Recorder()
    server = _server(recorder)
    with trio.fail_after(WAIT):
        async with (
            trimcp.open_client(server.in_memory(), era="handshake") as first,
            trimcp.open_client(server.in_memory(), era="handshake") as second,
        ):
            assert "'serving': 1" in _text(await first.call_tool("state", {}))
            assert "'serving': 2" in _text(await second.call_tool("state", {}))
    assert sorted(recorder.events) == ["enter 1", "enter 2", "exit 1", "exit 2"]


async def test_no_lifespan_no_state() -> None:
    server = _server(None)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            assert _text(await client.call_tool("state", {})) == "None"


async def test_a_failing_lifespan_stops_the_serving_before_anything_is_served() -> None:
    @asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield  # pragma: no cover

    server = _server(broken)
    with pytest.raises(RuntimeError, match="no database"), trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake"):
            pass  # pragma: no cover


async def test_the_exit_runs_when_the_serving_is_cancelled() -> None:
    recorder = Recorder()
    server = _server(recorder)
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: trimcp.serve_websocket(server, port=0, task_status=task_status)
            )
            async with trimcp.open_client(
                trimcp.websocket(f"ws://127.0.0.1:{port}/mcp"), era="handshake"
            ) as client:
                assert "'serving': 1" in _text(await client.call_tool("state", {}))
            nursery.cancel_scope.cancel()
    assert recorder.events == ["enter 1", "exit 1"]


async def test_serve_http_runs_one_lifespan_for_all_its_sessions_and_shows_headers() -> None:
    recorder = Recorder()
    server = _server(recorder)
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: trimcp.serve_http(server, port=0, task_status=task_status)
            )
            url = f"http://127.0.0.1:{port}/mcp"
            tenant = trimcp.streamable_http(url, headers={"X-Tenant": "acme"})
            async with (
                trimcp.open_client(tenant, era="handshake") as first,
                trimcp.open_client(trimcp.streamable_http(url), era="handshake") as second,
            ):
                assert "'serving': 1" in _text(await first.call_tool("state", {}))
                assert "'serving': 1" in _text(await second.call_tool("state", {}))
                assert _text(await first.call_tool("headers", {})) == "acme"
                assert _text(await second.call_tool("headers", {})) == "-"
            async with trimcp.open_client(tenant, era="stateless") as modern:
                assert _text(await modern.call_tool("headers", {})) == "acme"
                assert "'serving': 1" in _text(await modern.call_tool("state", {}))
            assert recorder.events == ["enter 1"]
            await server.shutdown(grace=1)
    assert recorder.events == ["enter 1", "exit 1"]

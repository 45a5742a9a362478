"""Bounds and odd answers: oversized bodies and events, batches, 404 on the GET stream."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

import trimcp
from trimcp.transports.http import StreamableHttp

from ._fake import Exchange, FakeRequest, mcp_app, result, start_server

WAIT = 60
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "conformance" / "client.py"


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


async def big(request: FakeRequest, ex: Exchange) -> None:
    name = request.message["params"]["name"]
    payload = {"content": [{"type": "text", "text": "x" * 5000}]}
    if name == "json":
        await ex.json(result(request, payload))
    elif name == "sse":
        await ex.start_sse()
        await ex.event(result(request, payload))
        await ex.end()
    else:
        await ex.json(result(request, {"content": []}))


@pytest.mark.parametrize(("name", "match"), [("json", "larger than"), ("sse", "malformed SSE")])
async def test_oversized_answers_fail_only_their_call(
    clock: trio.testing.MockClock, name: str, match: str
) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": big}))
        transport = StreamableHttp(url=server.url, listen=False, max_message_size=4096)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                with pytest.raises(trimcp.McpError, match=match):
                    await client.call_tool(name)
                small = await client.call_tool("small")
        nursery.cancel_scope.cancel()
    assert small.content == []


async def test_batched_json_answer_is_delivered(clock: trio.testing.MockClock) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        token = request.message["params"]["_meta"]["progressToken"]
        progress = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 5},
        }
        await ex.json([progress, result(request, {"content": []})])

    seen: list[float] = []

    async def on_progress(progress: float, _total: float | None, _message: str | None) -> None:
        seen.append(progress)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                answer = await client.call_tool("t", on_progress=on_progress)
        nursery.cancel_scope.cancel()
    assert answer.content == []
    assert seen == [5]


async def test_404_on_the_get_stream_expires_the_session(clock: trio.testing.MockClock) -> None:
    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        await trio.sleep(1)
        await ex.respond(404)

    async def call(request: FakeRequest, ex: Exchange) -> None:
        await ex.start_sse()
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}, on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, reinitialize=False), era="handshake"
            ) as client:
                with pytest.raises(trimcp.ConnectionClosedError, match="HTTP 404"):
                    await client.call_tool("t")
        nursery.cancel_scope.cancel()
    assert server.of("DELETE") == []


async def test_sessionless_404_on_get_just_stops_listening(
    clock: trio.testing.MockClock,
) -> None:
    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        await ex.respond(404)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(session_id=None, on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url), era="handshake"
            ) as client:
                await trio.sleep(30)
                await client.ping()
        nursery.cancel_scope.cancel()
    assert len(server.of("GET")) == 1
    assert all("mcp-session-id" not in r.headers for r in server.requests)


async def test_conformance_client_rejects_an_unknown_scenario() -> None:
    with trio.fail_after(WAIT):
        done = await trio.run_process(
            [sys.executable, str(EXAMPLE), "http://127.0.0.1:9/mcp"],
            env={"MCP_CONFORMANCE_SCENARIO": "no-such-thing", "PATH": ""},
            check=False,
            capture_stdout=True,
            capture_stderr=True,
        )
    assert done.returncode == 1
    assert b"unknown scenario 'no-such-thing'" in done.stderr


def test_conformance_client_fills_schema_defaults() -> None:
    namespace: dict[str, object] = {"__name__": "conformance_client"}
    exec(compile(EXAMPLE.read_text(), str(EXAMPLE), "exec"), namespace)
    defaults = namespace["schema_defaults"]
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "plain": {"type": "string"},
        },
    }
    assert defaults(schema) == {"name": "John Doe", "age": 30}  # type: ignore[operator]
    assert json.dumps(defaults({})) == "{}"  # type: ignore[operator]

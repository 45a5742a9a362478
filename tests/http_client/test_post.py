"""The POST path: JSON and SSE answers, 202, keep-alive reuse, session id and headers."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.transports.http import HttpRequestInfo, StreamableHttp

from ._fake import Exchange, FakeRequest, mcp_app, result, start_server

WAIT = 30


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 20 ms of real idleness (real loopback I/O)."""
    return trio.testing.MockClock(autojump_threshold=0.02)


async def test_json_answers_and_keep_alive_reuse(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())
        transport = trimcp.streamable_http(server.url, listen=False)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake") as client:
                for i in range(3):
                    answer = await client.call_tool("add", {"a": i, "b": 1})
                    assert answer.content[0].text == f"sum={i + 1}"  # type: ignore[union-attr]
                await client.ping()
        nursery.cancel_scope.cancel()
    posts = server.of("POST")
    # initialize, initialized, 3 calls, ping: all on one kept-alive connection
    assert [r.rpc_method for r in posts] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/call",
        "tools/call",
        "ping",
    ]
    assert {r.connection for r in posts} == {1}
    for request in posts:
        assert request.headers["content-type"] == "application/json"
        assert request.headers["accept"] == "application/json, text/event-stream"


async def test_session_id_and_protocol_version_carried(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(session_id="abc-123"))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                await client.call_tool("add", {"a": 1, "b": 2})
                assert client.session.channel.session_id == "abc-123"  # type: ignore[attr-defined]
        nursery.cancel_scope.cancel()
    first, *later = server.requests
    assert first.rpc_method == "initialize"
    assert "mcp-session-id" not in first.headers
    assert "mcp-protocol-version" not in first.headers
    assert later
    for request in later:
        assert request.headers["mcp-session-id"] == "abc-123"
        assert request.headers["mcp-protocol-version"] == "2025-11-25"
    assert later[-1].method == "DELETE"


async def test_sse_answer_with_progress_comments_and_split_chunks(
    clock: trio.testing.MockClock,
) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        token = request.message["params"]["_meta"]["progressToken"]
        await ex.start_sse()
        await ex.raw(b": keep-alive\n\n")
        progress = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1, "total": 2},
        }
        await ex.event(progress, id="e1")
        answer = result(request, {"content": [{"type": "text", "text": "done"}]})
        encoded = b"id: e2\r\ndata: " + json.dumps(answer).encode() + b"\r\n\r\n"
        for i in range(0, len(encoded), 7):  # the event arrives in small pieces
            await ex.raw(encoded[i : i + 7])
        await ex.end()

    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, _message: str | None) -> None:
        seen.append((progress, total))

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                answer = await client.call_tool("t", {}, on_progress=on_progress)
                again = await client.call_tool("t", {}, on_progress=on_progress)
        nursery.cancel_scope.cancel()
    assert answer.content[0].text == "done"  # type: ignore[union-attr]
    assert again.content[0].text == "done"  # type: ignore[union-attr]
    assert seen == [(1, 2), (1, 2)]
    # the SSE stream ended properly, so its connection was reused
    assert {r.connection for r in server.of("POST")} == {1}


async def test_headers_hook_is_called_per_request(clock: trio.testing.MockClock) -> None:
    calls: list[HttpRequestInfo] = []

    async def hook(info: HttpRequestInfo) -> dict[str, str]:
        calls.append(info)
        return {"X-Trace": f"n{len(calls)}", "Mcp-Session-Id": "forged"}

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                StreamableHttp(url=server.url, headers=hook), era="handshake"
            ):
                pass
        nursery.cancel_scope.cancel()
    traces = [r.headers["x-trace"] for r in server.requests]
    assert len(set(traces)) == len(traces) >= 3  # evaluated anew for each request
    assert set(traces) <= {f"n{i + 1}" for i in range(len(calls))}
    assert calls[0].method == "POST"
    assert calls[0].message is not None
    # the hook cannot override the transport's own headers
    assert all(r.headers.get("mcp-session-id") in (None, "s-1") for r in server.requests)


async def test_static_headers_mapping(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, headers={"Authorization": "Bearer t"}),
                era="handshake",
            ):
                pass
        nursery.cancel_scope.cancel()
    assert all(r.headers["authorization"] == "Bearer t" for r in server.requests)


async def test_stale_keep_alive_connection_is_retried(clock: trio.testing.MockClock) -> None:
    """The server drops an idle kept-alive connection: the next POST goes on a fresh one."""
    closing: dict[str, Any] = {}

    async def ping(request: FakeRequest, ex: Exchange) -> None:
        await ex.json(result(request, {}))
        if not closing:
            closing["done"] = True
            await ex.abort()  # after a complete response, without Connection: close

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"ping": ping}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                await client.ping()
                await client.ping()
        nursery.cancel_scope.cancel()
    pings = server.of("POST", "ping")
    assert len(pings) == 2
    assert pings[0].connection != pings[1].connection


async def test_bad_url_is_refused() -> None:
    with pytest.raises(ValueError, match="http"):
        trimcp.streamable_http("ftp://example.com/mcp")
    with pytest.raises(ValueError, match="credentials"):
        trimcp.streamable_http("http://user:pw@127.0.0.1/mcp")

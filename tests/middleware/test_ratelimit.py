"""Rate limiting: a token bucket per key; -32000 in general, 429 + Retry-After on HTTP."""

from __future__ import annotations

import json

import pytest
import trio

import trimcp
from trimcp.middleware import RATE_LIMITED, RateLimit, per_principal

from ..http_server._asgi import rpc, running
from ._servers import tool_server


async def _echo(client: trimcp.Client) -> str:
    result = await client.call_tool("echo", {"text": "x"})
    return str(result.content[0].text)  # type: ignore[union-attr]


async def test_a_session_past_its_burst_is_refused_until_tokens_refill(
    autojump_clock: object,
) -> None:
    server = tool_server()
    limit = RateLimit(rate=2, burst=3)
    limit.install(server.middlewares)
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        for _ in range(3):
            assert await _echo(client) == "x"
        with pytest.raises(trimcp.McpError) as refused:
            await _echo(client)
        assert refused.value.code == RATE_LIMITED
        assert refused.value.data == {"retryAfterMs": 500}
        await client.ping()  # never limited
        await trio.sleep(0.5)
        assert await _echo(client) == "x"
        # another session has a bucket of its own
        async with trimcp.open_client(server.in_memory(), era="handshake") as other:
            assert await _echo(other) == "x"
    assert limit.refused == 1


async def test_the_key_function_picks_the_bucket(autojump_clock: object) -> None:
    server = tool_server()
    RateLimit(rate=1, burst=1, key=lambda _session, _request: "everyone").install(
        server.middlewares
    )
    async with (
        trimcp.open_client(server.in_memory(), era="handshake") as one,
        trimcp.open_client(server.in_memory(), era="handshake") as two,
    ):
        assert await _echo(one) == "x"
        with pytest.raises(trimcp.McpError):
            await _echo(two)


async def test_per_principal_falls_back_to_the_session() -> None:
    class Holder:
        principal = None

    class Principal:
        subject = "alice"

    holder = Holder()
    assert per_principal(holder, None) is holder  # type: ignore[arg-type]
    holder.principal = Principal()  # type: ignore[assignment]
    assert per_principal(holder, None) == ("principal", "alice")  # type: ignore[arg-type]


def test_buckets_are_bounded() -> None:
    limit = RateLimit(rate=1, burst=1, max_keys=2)

    async def main() -> None:
        assert limit.wait_for("a") == 0
        assert limit.wait_for("a") > 0
        assert limit.wait_for("b") == 0
        assert limit.wait_for("c") == 0  # "a" was least recently used: forgotten
        assert len(limit._buckets) == 2
        assert limit.wait_for("a") == 0

    trio.run(main)


async def test_over_streamable_http_the_refusal_is_429_with_retry_after(
    autojump_clock: object,
) -> None:
    server = tool_server()
    RateLimit(rate=0.5, burst=1).install(server.middlewares)
    async with running(server) as http:
        await http.initialize()  # initialize is never limited
        call = rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        first = await http.post(call)
        assert first.status == 200
        second = await http.post(rpc(3, "tools/call", {"name": "echo", "arguments": {}}))
        assert second.status == 429
        assert second.headers["retry-after"] == "2"
        body = json.loads(second.body)
        assert body["id"] == 3
        assert body["error"]["code"] == RATE_LIMITED
        assert body["error"]["data"] == {"retryAfterMs": 2000}


async def test_trimcp_client_over_http_reads_the_refusal() -> None:
    server = tool_server()
    RateLimit(rate=1, burst=1).install(server.middlewares)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: trimcp.serve_http(server, port=0, task_status=task_status)
        )
        url = f"http://127.0.0.1:{port}/mcp"
        async with trimcp.open_client(trimcp.streamable_http(url), era="handshake") as client:
            assert await _echo(client) == "x"
            with pytest.raises(trimcp.McpError) as refused:
                await _echo(client)
            assert refused.value.code == RATE_LIMITED
            assert "429" in refused.value.message
            assert 0 < refused.value.data["retryAfterMs"] <= 1000  # type: ignore[index]
        nursery.cancel_scope.cancel()

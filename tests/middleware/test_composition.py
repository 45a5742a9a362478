"""All of them at once, in the documented order: each keeps doing its part."""

from __future__ import annotations

import logging

import pytest

import trimcp
from trimcp.middleware import (
    RATE_LIMITED,
    ErrorMasking,
    RateLimit,
    RequestLogging,
    ResponseCache,
    Timing,
)

from ._servers import tool_server


async def test_the_documented_order(
    caplog: pytest.LogCaptureFixture, autojump_clock: object
) -> None:
    server = tool_server()
    timing = Timing()
    cache = ResponseCache(default_ttl_ms=60_000)
    for middleware in (
        RequestLogging(),
        timing,
        RateLimit(rate=1, burst=4),
        cache,
        ErrorMasking(),
    ):
        middleware.install(server.middlewares)
    with caplog.at_level(logging.INFO):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            await client.read_resource("memo://today")  # 1: handled
            await client.read_resource("memo://today")  # 2: from the cache
            with pytest.raises(trimcp.McpError) as masked:  # 3: masked
                await client.call_tool("broken")
            await client.call_tool("echo", {"text": "x"})  # 4: the last token
            with pytest.raises(trimcp.McpError) as limited:  # 5: refused
                await client.call_tool("echo", {"text": "x"})
    assert masked.value.message == "Request failed"
    assert limited.value.code == RATE_LIMITED
    assert server.calls["read"] == 1  # type: ignore[attr-defined]
    assert cache.hits == 1
    logged = [
        (r.mcp_method, r.mcp_outcome)  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "trimcp.requests" and r.mcp_method != "initialize"  # type: ignore[attr-defined]
    ]
    assert logged == [
        ("resources/read", "ok"),
        ("resources/read", "ok"),
        ("tools/call", "error"),
        ("tools/call", "ok"),
        ("tools/call", "error"),
    ]
    # the real error was logged by the masking middleware, inside the others
    assert any("password expired" in r.getMessage() for r in caplog.records)
    assert timing.stats[("inbound", "tools/call")].errors == 2

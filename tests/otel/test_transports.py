"""Trace context crosses every transport in both directions: stdio (a child process),
Streamable HTTP (both engines) and WebSocket, on 127.0.0.1 only."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

import trimcp

from ._otel import Sdk, model, sampling_server, sdk

HERE = os.path.dirname(os.path.abspath(__file__))


@asynccontextmanager
async def listening(serve: Any, server: trimcp.Server, **options: Any) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        port: int = await nursery.start(
            lambda task_status: serve(server, port=0, task_status=task_status, **options)
        )
        yield port
        nursery.cancel_scope.cancel()


async def _check_linked(otel: Sdk, transport: Any) -> None:
    sampler = model("yes")
    client_side = otel.telemetry.instrument(trimcp.Middlewares())
    async with trimcp.open_client(
        transport, sampling=sampler, middlewares=client_side, era="handshake"
    ) as client:
        result = await client.call_tool("ask", {"prompt": "q"})
    assert result.content[0].text == "yes"  # type: ignore[union-attr]
    call = otel.one("tools/call ask", "CLIENT")
    served = otel.one("tools/call ask", "SERVER")
    reverse = otel.one("sampling/createMessage", "CLIENT")
    answered = otel.one("sampling/createMessage", "SERVER")
    assert served.parent is not None
    assert served.parent.span_id == call.context.span_id
    assert served.parent.is_remote  # it came through _meta, not the process's context
    assert reverse.parent is not None
    assert reverse.parent.span_id == served.context.span_id
    assert answered.parent is not None
    assert answered.parent.span_id == reverse.context.span_id
    transport_attributes = served.attributes or {}
    assert transport_attributes["network.transport"] == "tcp"


@pytest.mark.parametrize("engine", ["h11", "hypercorn"])
async def test_streamable_http(engine: str) -> None:
    server = sampling_server()
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        async with listening(trimcp.serve_http, server, engine=engine) as port:
            await _check_linked(otel, trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp"))
        served = otel.one("tools/call ask", "SERVER")
        assert (served.attributes or {})["network.protocol.name"] == "http"
        assert (served.attributes or {})["mcp.session.id"]


async def test_websocket() -> None:
    server = sampling_server()
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        async with listening(trimcp.serve_websocket, server) as port:
            await _check_linked(otel, trimcp.websocket(f"ws://127.0.0.1:{port}/mcp"))
        served = otel.one("tools/call ask", "SERVER")
        assert (served.attributes or {})["network.protocol.name"] == "websocket"


async def test_stdio_child_process() -> None:
    with sdk() as otel:
        sampler = model("yes")
        client_side = otel.telemetry.instrument(trimcp.Middlewares())
        command = trimcp.stdio_command(sys.executable, os.path.join(HERE, "stdio_server.py"))
        with trio.fail_after(60):
            async with trimcp.open_client(
                command, sampling=sampler, middlewares=client_side, era="handshake"
            ) as client:
                result = await client.call_tool("ask", {"prompt": "q"})
        call = otel.one("tools/call ask", "CLIENT")
        # client -> server: the child saw the client span's context in _meta
        text = result.content[0].text  # type: ignore[union-attr]
        flags = f"{int(call.context.trace_flags):02x}"
        assert text == f"00-{call.context.trace_id:032x}-{call.context.span_id:016x}-{flags}"
        # server -> client: the child's reverse call carried the same trace on
        answered = otel.one("sampling/createMessage", "SERVER")
        assert answered.context.trace_id == call.context.trace_id
        assert answered.parent is not None
        assert answered.parent.is_remote
        assert (call.attributes or {})["network.transport"] == "pipe"

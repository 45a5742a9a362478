"""Spans: one per request on both sides, reverse calls as children, outcomes recorded."""

from __future__ import annotations

import re
import sys

import pytest
import trio
import trio.testing
from opentelemetry.trace import SpanKind, StatusCode

import trimcp
from trimcp.nursery import SessionLimits

from ._otel import model, sampling_server, sdk

TRACEPARENT = re.compile(r"^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


async def test_a_sampling_tool_gives_a_trace_that_mirrors_the_nursery_tree() -> None:
    server = sampling_server()
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        client_side = otel.telemetry.instrument(trimcp.Middlewares())
        sampler = model("hello")
        async with trimcp.open_client(
            server.in_memory(), sampling=sampler, middlewares=client_side, era="handshake"
        ) as client:
            result = await client.call_tool("ask", {"prompt": "hi?"})
        assert result.content[0].text == "hello"  # type: ignore[union-attr]

        call = otel.one("tools/call ask", "CLIENT")
        served = otel.one("tools/call ask", "SERVER")
        reverse = otel.one("sampling/createMessage", "CLIENT")
        answered = otel.one("sampling/createMessage", "SERVER")
        # client call -> server handler -> its reverse call -> the client's handler
        assert served.parent is not None
        assert served.parent.span_id == call.context.span_id
        assert reverse.parent is not None
        assert reverse.parent.span_id == served.context.span_id
        assert answered.parent is not None
        assert answered.parent.span_id == reverse.context.span_id
        assert len({s.context.trace_id for s in (call, served, reverse, answered)}) == 1
        # the trace context travelled in _meta, unprefixed (SEP-414)
        assert TRACEPARENT.match(sampler.metas[0]["traceparent"])
        attributes = served.attributes or {}
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "ask"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == "2025-11-25"
        assert attributes["trimcp.era"] == "handshake"
        assert attributes["trimcp.outcome"] == "ok"
        assert attributes["jsonrpc.request.id"]
        assert "trimcp.session" in attributes
        assert served.kind is SpanKind.SERVER
        assert call.kind is SpanKind.CLIENT
        assert served.status.status_code is StatusCode.UNSET
        # initialize and the listing the client made are spans too
        assert otel.one("initialize", "SERVER").attributes["trimcp.outcome"] == "ok"  # type: ignore[index]


async def test_cancelling_a_call_records_the_cancellation_down_the_tree() -> None:
    server = sampling_server()
    state = server.test_state  # type: ignore[attr-defined]
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        client_side = otel.telemetry.instrument(trimcp.Middlewares())
        async with trimcp.open_client(
            server.in_memory(), sampling=model(), middlewares=client_side, era="handshake"
        ) as client:
            async with trio.open_nursery() as nursery:

                async def call() -> None:
                    await client.call_tool("ask_forever")

                nursery.start_soon(call)
                await state["asked"].wait()
                await trio.testing.wait_all_tasks_blocked()
                nursery.cancel_scope.cancel()
            await client.ping()  # the server has handled the cancellation by now
            await trio.testing.wait_all_tasks_blocked()

        by_kind = {
            (s.name, s.kind.name): s
            for s in otel.finished()
            if s.name in ("tools/call ask_forever", "sampling/createMessage")
        }
        for key, reason in [
            (("tools/call ask_forever", "CLIENT"), "caller"),
            (("tools/call ask_forever", "SERVER"), "peer"),
            (("sampling/createMessage", "CLIENT"), "caller"),
            (("sampling/createMessage", "SERVER"), "peer"),
        ]:
            span = by_kind[key]
            assert (span.attributes or {})["trimcp.outcome"] == "cancelled", key
            events = [(e.name, dict(e.attributes or {})) for e in span.events]
            assert events == [("mcp.cancelled", {"trimcp.cancel.reason": reason})], key
            assert span.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize(
    ("tool", "outcome", "error_type"),
    [("fail", "error", "-32042"), ("soft_fail", "tool_error", "tool_error")],
)
async def test_errors_are_recorded_on_both_sides(tool: str, outcome: str, error_type: str) -> None:
    server = sampling_server()
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        client_side = otel.telemetry.instrument(trimcp.Middlewares())
        async with trimcp.open_client(
            server.in_memory(), middlewares=client_side, era="handshake"
        ) as client:
            if tool == "fail":
                with pytest.raises(trimcp.McpError) as raised:
                    await client.call_tool(tool)
                assert raised.value.code == -32042
            else:
                assert (await client.call_tool(tool)).is_error
        for kind in ("CLIENT", "SERVER"):
            span = otel.one(f"tools/call {tool}", kind)
            attributes = span.attributes or {}
            assert attributes["trimcp.outcome"] == outcome
            assert attributes["error.type"] == error_type
            assert span.status.status_code is StatusCode.ERROR
        if tool == "fail":
            span = otel.one("tools/call fail", "SERVER")
            assert span.status.description == "no such thing"
            assert (span.attributes or {})["rpc.response.status_code"] == "-32042"


async def test_timeouts_on_both_sides(autojump_clock: object) -> None:
    server = trimcp.Server("t", limits=SessionLimits(handler_timeout=5))

    @server.tool()
    async def sleepy() -> str:
        await trio.sleep(1000)
        return "awake"

    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        client_side = otel.telemetry.instrument(trimcp.Middlewares())
        async with trimcp.open_client(
            server.in_memory(), middlewares=client_side, era="handshake"
        ) as client:
            with pytest.raises(trimcp.McpError):
                await client.call_tool("sleepy")
            with pytest.raises(trimcp.RequestTimeoutError):
                await client.call_tool("sleepy", timeout=1)
        served = [s for s in otel.named("tools/call sleepy") if s.kind is SpanKind.SERVER]
        assert [(s.attributes or {})["trimcp.outcome"] for s in served] == ["timeout", "cancelled"]
        calls = [s for s in otel.named("tools/call sleepy") if s.kind is SpanKind.CLIENT]
        assert [(s.attributes or {})["trimcp.outcome"] for s in calls] == ["timeout", "timeout"]
        assert (calls[1].attributes or {})["error.type"] == "timeout"


async def test_the_server_span_continues_a_trace_the_caller_started() -> None:
    server = sampling_server()
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            await client.request("tools/call", {"name": "meta", "_meta": {"traceparent": parent}})
        span = otel.one("tools/call meta", "SERVER")
        assert f"{span.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
        assert span.parent is not None
        assert f"{span.parent.span_id:016x}" == "b7ad6b7169203331"
        assert span.parent.is_remote


async def test_a_session_ending_cancels_its_spans() -> None:
    server = sampling_server()
    state = server.test_state  # type: ignore[attr-defined]
    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        async with (
            trimcp.open_client(server.in_memory(), sampling=model(), era="handshake") as client,
            trio.open_nursery() as nursery,
        ):

            async def call() -> None:
                with pytest.raises(trimcp.ConnectionClosedError):
                    await client.call_tool("ask_forever")

            nursery.start_soon(call)
            await state["asked"].wait()
            for session in server.sessions:
                session.close()
        span = otel.one("tools/call ask_forever", "SERVER")
        events = [(e.name, dict(e.attributes or {})) for e in span.events]
        assert events == [("mcp.cancelled", {"trimcp.cancel.reason": "session_ended"})]


def test_trimcp_does_not_import_opentelemetry_unless_asked() -> None:
    import subprocess

    code = "import sys, trimcp; print(any(m.startswith('opentelemetry') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


async def test_an_uninstrumented_session_has_no_observer() -> None:
    server = sampling_server()
    async with trimcp.open_client(server.in_memory(), era="handshake") as client:
        assert client.session.observer is None
        (served,) = server.sessions
        assert served.observer is None


async def test_one_session_has_one_observer() -> None:
    server = sampling_server()
    with sdk() as first, sdk() as second:
        first.telemetry.instrument(server.middlewares)
        second.telemetry.instrument(server.middlewares)
        with pytest.raises(ValueError, match="already has a request observer"):
            async with trimcp.open_client(server.in_memory(), era="handshake"):
                pass  # pragma: no cover

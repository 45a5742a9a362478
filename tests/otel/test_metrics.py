"""Metrics: the MCP conventions' histograms, and in flight, queued, cancelled, errors."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trimcp
from trimcp.otel import DURATION_BUCKETS

from ._otel import sampling_server, sdk


async def test_operation_and_session_durations(autojump_clock: object) -> None:
    server = sampling_server()

    @server.tool()
    async def nap(seconds: float) -> str:
        await trio.sleep(seconds)
        return "rested"

    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        client_side = otel.telemetry.instrument(trimcp.Middlewares())
        async with trimcp.open_client(
            server.in_memory(), middlewares=client_side, era="handshake"
        ) as client:
            await client.call_tool("nap", {"seconds": 3})
            with pytest.raises(trimcp.McpError):
                await client.call_tool("fail")
            await trio.sleep(10)

        for side in ("server", "client"):
            points = otel.points(f"mcp.{side}.operation.duration")
            by_tool = {p.attributes.get("gen_ai.tool.name"): p for p in points if p.attributes}
            nap_point = by_tool["nap"]
            assert nap_point.attributes["mcp.method.name"] == "tools/call"
            assert nap_point.attributes["trimcp.outcome"] == "ok"
            assert "error.type" not in nap_point.attributes
            assert "trimcp.session" not in nap_point.attributes  # unbounded: spans only
            assert nap_point.count == 1
            assert nap_point.sum == pytest.approx(3)
            assert tuple(nap_point.explicit_bounds) == DURATION_BUCKETS
            assert by_tool["fail"].attributes["error.type"] == "-32042"
            (session,) = otel.points(f"mcp.{side}.session.duration")
            assert session.count == 1
            assert session.sum == pytest.approx(13)
            assert session.attributes["mcp.protocol.version"] == "2025-11-25"

        errors = otel.points("trimcp.requests.errors")
        assert {(p.attributes["trimcp.direction"], p.value) for p in errors} == {
            ("inbound", 1),
            ("outbound", 1),
        }


async def test_in_flight_queued_and_cancelled() -> None:
    server = trimcp.Server("busy", limits=trimcp.SessionLimits(max_in_flight=2))
    release = trio.Event()

    @server.tool()
    async def hold() -> str:
        await release.wait()
        return "done"

    with sdk() as otel:
        otel.telemetry.instrument(server.middlewares)
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(client.call_tool, "hold")
                await trio.testing.wait_all_tasks_blocked()

                def gauge(name: str) -> dict[str, int]:
                    return {p.attributes["trimcp.role"]: p.value for p in otel.points(name)}

                assert gauge("trimcp.requests.in_flight") == {"server": 2, "client": 0}
                assert gauge("trimcp.requests.queued") == {"server": 1, "client": 0}
                nursery.cancel_scope.cancel()
            await client.ping()
            await trio.testing.wait_all_tasks_blocked()
            (cancelled,) = otel.points("trimcp.requests.cancelled")
            assert cancelled.attributes == {
                "mcp.method.name": "tools/call",
                "trimcp.direction": "inbound",
            }
            assert cancelled.value >= 2  # the running ones (a queued one may never start)
            assert gauge("trimcp.requests.in_flight") == {"server": 0, "client": 0}

"""The benchmark over WebSocket: every metric for trimcp, the floor and raw-trimcp.

The metric tests run client and server in this Trio run (servers on 127.0.0.1, free
ports) so that they are quick; one command-line run covers the server processes, the
workers and the report; the SDK's "no websocket transport" line is checked on its own.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
from wsproto.events import TextMessage

import trimcp
from trimcp.bench import _fanout, _parked, _throughput, build_parser, load_implementation
from trimcp.bench._cli import settings_of
from trimcp.bench._core import Target, Workload
from trimcp.bench._impl_floor import FLOOR
from trimcp.bench._impl_trimcp import IMPLEMENTATION, make_server
from trimcp.bench._impl_trimcp import connect_websocket as connect_trimcp
from trimcp.bench._report import render
from trimcp.bench._runner import lacking
from trimcp.bench._ws import _open, connect_websocket, serve_floor_websocket

#: The ``bench_run`` fixture (``conftest.py``).
BenchRun = Callable[..., tuple[dict[str, Any], str]]

Connect = Callable[[Workload], AbstractAsyncContextManager[Target]]


class InProcess:
    """A driver whose server runs in this Trio run instead of a process of its own."""

    def __init__(self, connect: Connect) -> None:
        self.connect = connect


@asynccontextmanager
async def _served(serve: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve)
        yield f"ws://127.0.0.1:{port}/mcp"
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def floor(workload: Workload) -> AsyncIterator[Target]:
    async with (
        _served(serve_floor_websocket) as url,
        connect_websocket(url, workload, ours=True) as target,
    ):
        yield target


def _trimcp_server(workload: Workload) -> Any:
    return partial(trimcp.serve_websocket, make_server(workload), host="127.0.0.1", port=0)


@asynccontextmanager
async def raw_trimcp(workload: Workload) -> AsyncIterator[Target]:
    async with (
        _served(_trimcp_server(workload)) as url,
        connect_websocket(url, workload, ours=True) as target,
    ):
        yield target


@asynccontextmanager
async def trimcp_pair(workload: Workload) -> AsyncIterator[Target]:
    async with (
        _served(_trimcp_server(workload)) as url,
        connect_trimcp(url, workload) as target,
    ):
        yield target


PAIRS = {"trimcp": trimcp_pair, "floor": floor, "raw-trimcp": raw_trimcp}


@pytest.mark.parametrize("name", list(PAIRS))
async def test_every_metric_measures_real_calls(name: str) -> None:
    impl = IMPLEMENTATION if name == "trimcp" else FLOOR  # the runtime: Trio for all three
    driver = InProcess(PAIRS[name])
    workload = Workload()

    params = {"concurrency": 10, "warmup": 0.05, "duration": 0.2}
    sample = await _throughput.run(impl, driver, workload, params)
    assert sample["calls"] > 0
    assert sample["calls_per_s"] > 0
    assert 0 < sample["latency_s"]["p50"] <= sample["latency_s"]["p99"]

    parked = await _parked.run(impl, driver, workload, {"parked": 20, "timeout": 10.0})
    assert parked["parked"] == 20
    assert parked["all_parked"] is True
    assert parked["observed"] == 20  # every handler saw its notifications/cancelled
    assert parked["all_observed"] is True
    assert parked["cancel_s"] > 0
    assert parked["leak_free"] is True
    assert parked["active_after"] == 0

    fanout = await _fanout.run(impl, driver, workload, {"fanout": 100, "rounds": 2})
    assert fanout["n"] == 100
    assert fanout["one_s"] > 0
    assert fanout["fanout_s"] > 0


async def test_floor_server_outlives_clients_that_vanish() -> None:
    async with _served(serve_floor_websocket) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(b"GET /mcp HTTP/1.1\r\nhost: x\r\n\r\n")  # not an upgrade
        await stream.aclose()
        stream, ws, _pending = await _open(url)  # a parked call, then no close frame
        park = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "park"}}
        await stream.send_all(ws.send(TextMessage(data=json.dumps(park))))
        await trio.testing.wait_all_tasks_blocked()
        await stream.aclose()
        await trio.testing.wait_all_tasks_blocked()
        async with connect_websocket(url, Workload(), ours=True) as target:
            await target.call()


async def _parked_until_the_server_goes(url: str, server_scope: trio.CancelScope) -> None:
    async with (
        connect_websocket(url, Workload(), ours=True) as target,
        trio.open_nursery() as calls,
    ):
        assert target.park is not None
        for _ in range(50):  # more cancellation notes than the writer's queue holds
            calls.start_soon(target.park)
        await trio.testing.wait_all_tasks_blocked()
        server_scope.cancel()
        await trio.sleep_forever()


async def test_a_server_that_goes_away_fails_the_run_instead_of_hanging() -> None:
    server_scope = trio.CancelScope()

    async def serve(task_status: trio.TaskStatus[int]) -> None:
        with server_scope:
            await serve_floor_websocket(task_status=task_status)

    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve)
        with trio.fail_after(10), pytest.raises(BaseExceptionGroup) as caught:
            await _parked_until_the_server_goes(f"ws://127.0.0.1:{port}/mcp", server_scope)
    assert caught.group_contains(ConnectionError) or caught.group_contains(trio.BrokenResourceError)


def test_a_ws_url_selects_the_websocket_transport() -> None:
    args = build_parser().parse_args(["--url", "ws://127.0.0.1:9/mcp"])
    settings = settings_of(args)
    assert settings.transports == ("websocket",)
    assert settings.implementations["websocket"] == ("external",)


def test_the_sdk_is_reported_without_a_websocket_transport() -> None:
    pytest.importorskip("mcp")
    impl = load_implementation("sdk")
    assert "websocket" not in impl.drivers
    assert importlib.util.find_spec("mcp.client.websocket") is None
    hello = {"available": True, "transports": sorted(impl.drivers), "absent": dict(impl.absent)}
    marked = lacking(hello, "websocket")
    assert marked["available"] is False
    assert marked["reason"].startswith("no websocket transport: mcp ")
    assert marked["reason"].endswith("has no WebSocket client or server")
    results = {"implementations": {"websocket": {"sdk": marked}}, "samples": []}
    results["settings"] = {"metrics": []}
    assert "  sdk              UNAVAILABLE: no websocket transport: mcp " in render(results)


def test_command_line_run_over_websocket(bench_run: BenchRun) -> None:
    arguments = ("--impl", "trimcp,floor", "--metric", "throughput")
    data, stdout = bench_run("--transport", "websocket", *arguments)
    measured = {r["implementation"]: r for r in data["samples"]}
    assert set(measured) == {"trimcp", "floor"}
    for record in measured.values():
        assert "error" not in record, record
        assert record["sample"]["calls"] > 0
        assert record["sample"]["server_cpu_s"] > 0  # the server ran in a process of its own
    assert data["summary"]["websocket"]["throughput"]["calls/s"]["10"]["trimcp/floor"] > 0
    assert "websocket / throughput: calls/s" in stdout


def test_an_era_a_driver_does_not_speak_is_reported_not_run() -> None:
    from trimcp.bench._worker import _execute

    impl = load_implementation("raw-trimcp")
    command = {
        "metric": "throughput",
        "transport": "websocket",
        "workload": Workload(era="stateless").to_json(),
        "params": {"concurrency": 1, "warmup": 0.0, "duration": 0.1},
    }
    answer = _execute(impl, command)
    assert answer == {
        "ok": True,
        "sample": {"unsupported": "the raw WebSocket client speaks the handshake era only"},
    }

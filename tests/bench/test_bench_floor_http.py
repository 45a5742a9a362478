"""The floor over Streamable HTTP: the bare h11 server and its ASGI app under hypercorn.

Both engines answer through one function, so each answer is checked on both; servers
run in this Trio run on 127.0.0.1 and free ports. One command-line run covers the
server processes and the report's ratio for ``floor-hypercorn``.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import h11
import pytest
import trio
import trio.testing

from trimcp.bench import _parked, _throughput, load_implementation
from trimcp.bench._core import TRIMCP_HTTP_CONNECTIONS, Target, Workload
from trimcp.bench._era import ERA_FREE
from trimcp.bench._floor_http import SESSION, serve_floor_http, serve_floor_hypercorn
from trimcp.bench._h11 import H11Client, connect_url
from trimcp.bench._impl_floor import FLOOR_HYPERCORN, client_connections
from trimcp.bench._registry import DEFAULT_BY_TRANSPORT
from trimcp.bench._report import PAIR_NOTES, render, summary

#: The ``bench_run`` fixture (``conftest.py``).
BenchRun = Callable[..., tuple[dict[str, Any], str]]

ENGINES = {"floor": serve_floor_http, "floor-hypercorn": serve_floor_hypercorn}

Exchange = tuple[int, dict[bytes, bytes], bytes]


@asynccontextmanager
async def _served(name: str) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        port: int = await nursery.start(ENGINES[name])
        yield port
        nursery.cancel_scope.cancel()


async def _exchange(
    port: int, body: bytes, headers: list[tuple[str, str]] | None = None, method: str = "POST"
) -> Exchange:
    """One request on a connection of its own: status, headers and body of the answer."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        conn = h11.Connection(h11.CLIENT)
        fields = [("host", "127.0.0.1"), ("content-length", str(len(body))), *(headers or [])]
        out = conn.send(h11.Request(method=method, target="/mcp", headers=fields))
        await stream.send_all(out + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage()))
        response: Any = None
        chunks: list[bytes] = []
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                return response.status_code, dict(response.headers), b"".join(chunks)


def _post(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


SESSION_HEADER = [("mcp-session-id", SESSION.decode())]
ECHO = {"id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}


@pytest.mark.parametrize("name", list(ENGINES))
async def test_the_floor_answers_as_a_streamable_http_server(name: str) -> None:
    init = {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    async with _served(name) as port:
        with trio.fail_after(10):
            status, headers, body = await _exchange(port, _post(init))
            assert status == 200
            assert headers[b"mcp-session-id"] == SESSION
            assert headers[b"content-type"] == b"application/json"
            answer = json.loads(body)
            assert answer["id"] == 1
            assert answer["result"]["protocolVersion"] == "2025-06-18"

            status, headers, body = await _exchange(port, _post(ECHO), SESSION_HEADER)
            assert status == 200
            assert b"mcp-session-id" not in headers
            assert int(headers[b"content-length"]) == len(body)
            assert json.loads(body) == {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {"content": [{"type": "text", "text": "hi"}]},
            }

            note = _post({"method": "notifications/initialized"})
            assert (await _exchange(port, note, SESSION_HEADER))[::2] == (202, b"")
            response = _post({"id": 3, "result": {}})  # an answer to no reverse call
            assert (await _exchange(port, response, SESSION_HEADER))[::2] == (202, b"")
            unknown = _post({"id": 4, "method": "tools/list"})
            body = (await _exchange(port, unknown, SESSION_HEADER))[2]
            assert json.loads(body)["error"]["code"] == -32601


@pytest.mark.parametrize("name", list(ENGINES))
async def test_the_floor_refuses_what_an_mcp_server_must(name: str) -> None:
    async with _served(name) as port:
        with trio.fail_after(10):
            status, _headers, body = await _exchange(port, _post(ECHO))
            assert status == 400
            assert json.loads(body)["error"]["message"] == "Mcp-Session-Id is required"
            other = [("mcp-session-id", "another")]
            assert (await _exchange(port, _post(ECHO), other))[0] == 404
            status, headers, _body = await _exchange(port, b"", SESSION_HEADER, method="GET")
            assert (status, headers[b"allow"]) == (405, b"POST")
            for bad in (b"{not json", b"[1, 2]", b'"text"'):
                status, _headers, body = await _exchange(port, bad, SESSION_HEADER)
                assert status == 400
                assert json.loads(body)["error"]["code"] == -32700
            # The server still serves after all that.
            assert (await _exchange(port, _post(ECHO), SESSION_HEADER))[0] == 200


async def _reset(port: int, data: bytes) -> None:
    """Send ``data`` on a connection of its own, then reset it (RST, not FIN)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    stream.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    await stream.send_all(data)
    await trio.testing.wait_all_tasks_blocked()
    await stream.aclose()


@pytest.mark.parametrize("name", list(ENGINES))
async def test_the_floor_outlives_clients_that_reset_or_send_garbage(name: str) -> None:
    # Any real server survives a peer that resets mid-request or sends a malformed
    # head; a floor that crashed on one would end a benchmark run with it.
    head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 40\r\n\r\n{"
    async with _served(name) as port:
        with trio.fail_after(10):
            await _reset(port, head)
            await _reset(port, b"")
            await _reset(port, b"\x00\x01 not http at all\r\n\r\n")
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:  # a malformed head, answered or dropped, never fatal
                await stream.send_all(b"GARBAGE\r\n\r\n")
                while await stream.receive_some(65536):
                    pass
            assert (await _exchange(port, _post(ECHO), SESSION_HEADER))[0] == 200


class InProcess:
    """A driver whose server runs in this Trio run instead of a process of its own."""

    def __init__(self, name: str) -> None:
        self.name = name

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Target]:
        async with _served(self.name) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            limit = client_connections(self.name, workload)
            async with connect_url(url, workload, ours=True, max_connections=limit) as target:
                yield target


async def test_floor_hypercorn_measures_throughput_and_parked_calls() -> None:
    driver = InProcess("floor-hypercorn")
    params = {"concurrency": 10, "warmup": 0.05, "duration": 0.2}
    sample = await _throughput.run(FLOOR_HYPERCORN, driver, Workload(), params)
    assert sample["calls"] > 0
    assert 0 < sample["latency_s"]["p50"] <= sample["latency_s"]["p99"]

    params = {"parked": 20, "timeout": 10.0, "task_slack": 16}
    parked = await _parked.run(FLOOR_HYPERCORN, driver, Workload(), params)
    assert parked["parked"] == 20
    assert parked["observed"] == 20  # each ended by its client leaving or its cancel note
    assert parked["all_observed"] is True
    assert parked["cancel_s"] > 0
    assert parked["leak_free"] is True
    assert parked["active_after"] == 0


async def _stats_until(target: Target, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    assert target.stats is not None
    while True:  # each read is a round trip: the server moves on meanwhile
        stats = await target.stats(False)
        if ready(stats):
            return stats


async def test_a_parked_call_under_hypercorn_ends_when_its_client_goes_away() -> None:
    park = _post({"id": 9, "method": "tools/call", "params": {"name": "park"}})
    async with _served("floor-hypercorn") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        with trio.fail_after(10):
            async with connect_url(url, Workload(), ours=True) as target:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                conn = h11.Connection(h11.CLIENT)
                fields = [("host", "x"), ("content-length", str(len(park))), *SESSION_HEADER]
                request = conn.send(h11.Request(method="POST", target="/mcp", headers=fields))
                await stream.send_all(request + conn.send(h11.Data(data=park)))
                before = await _stats_until(target, lambda s: s["active"] == 1)
                await stream.aclose()  # no notifications/cancelled: the client just leaves
                after = await _stats_until(target, lambda s: s["active"] == 0)
                assert after["cancelled"] == before["cancelled"] + 1
                await target.call()


def test_floor_hypercorn_runs_by_default_over_http_and_has_no_era() -> None:
    assert "floor-hypercorn" in DEFAULT_BY_TRANSPORT["http"]
    assert set(load_implementation("floor-hypercorn").drivers) == {"http"}
    assert "floor-hypercorn" in ERA_FREE


def test_the_floor_client_holds_trimcps_connections_under_hypercorn_only() -> None:
    assert client_connections("floor-hypercorn", Workload()) == TRIMCP_HTTP_CONNECTIONS
    assert client_connections("floor-hypercorn", Workload(connections=1008)) == 1008
    assert client_connections("floor", Workload()) is None  # one per caller
    assert client_connections(None, Workload(connections=1008)) is None


async def test_the_raw_client_holds_at_most_its_connections() -> None:
    async with _served("floor") as port:
        client = H11Client(f"http://127.0.0.1:{port}/mcp", max_connections=2)
        with trio.fail_after(10):
            await client.initialize()
            done: list[int] = []
            held: list[int] = []

            async def echo(i: int) -> None:
                await client.request("tools/call", {"name": "echo", "arguments": {"text": ""}})
                done.append(i)
                held.append(len(client.opened))

            async with trio.open_nursery() as nursery:
                for i in range(10):
                    nursery.start_soon(echo, i)
            assert sorted(done) == list(range(10))
            assert 1 <= max(held) <= 2
            assert client.slots == len(client.opened) <= 2

            async with trio.open_nursery() as nursery:
                for _ in range(2):  # both connections held by parked calls
                    nursery.start_soon(client.request, "tools/call", {"name": "park"})
                await trio.testing.wait_all_tasks_blocked()
                assert (client.slots, client.idle) == (2, [])
                waiter = trio.CancelScope()

                async def waits() -> None:
                    with waiter:
                        await echo(99)

                nursery.start_soon(waits)
                await trio.testing.wait_all_tasks_blocked()
                assert len(client.waiting) == 1
                waiter.cancel()  # gives up its turn, sends nothing, takes no slot
                await trio.testing.wait_all_tasks_blocked()
                assert (len(client.waiting), client.slots) == (0, 2)
                nursery.cancel_scope.cancel()  # the parked calls: dropped, then cancelled
            assert 99 not in done
            assert client.slots == len(client.opened) <= 2
            await echo(100)  # a slot freed by a dropped connection serves the next call
        await client.aclose()
        assert (client.slots, client.opened) == (0, set())


def _sample(name: str, calls_per_s: float, server_us: float) -> dict[str, Any]:
    sample = {
        "calls_per_s": calls_per_s,
        "latency_s": {"p50": 0.01, "p99": 0.02},
        "cpu_us_per_call": 100.0,
        "server_cpu_us_per_call": server_us,
    }
    record = {"transport": "http", "metric": "throughput", "concurrency": 100}
    return {**record, "implementation": name, "sample": sample}


def _results() -> dict[str, Any]:
    names = ["trimcp", "trimcp-hypercorn", "floor", "floor-hypercorn"]
    hello = {"available": True, "description": "", "runtime": "trio", "versions": {}}
    samples = [
        _sample("trimcp", 5000.0, 200.0),
        _sample("trimcp-hypercorn", 1600.0, 500.0),
        _sample("floor", 9000.0, 100.0),
        _sample("floor-hypercorn", 2000.0, 400.0),
    ]
    return {
        "settings": {"metrics": ["throughput"]},
        "implementations": {"http": {n: hello for n in names}},
        "samples": samples,
    }


def test_the_report_shows_what_each_hypercorn_ratio_measures() -> None:
    results = _results()
    calls = summary(results)["http"]["throughput"]["calls/s"]["100"]
    assert calls["trimcp-hypercorn/floor-hypercorn"] == pytest.approx(0.8)
    assert calls["floor-hypercorn/floor"] == pytest.approx(2000 / 9000)
    assert calls["trimcp-hypercorn/trimcp"] == pytest.approx(0.32)  # kept
    assert calls["trimcp/floor"] == pytest.approx(5000 / 9000)
    server = summary(results)["http"]["throughput"]["server process CPU per call, us"]["100"]
    assert server["trimcp-hypercorn/floor-hypercorn"] == pytest.approx(1.25)

    text = render(results)
    header = next(line for line in text.splitlines() if line.lstrip().startswith("in flight"))
    assert "trimcp-hypercorn/floor-hypercorn" in header
    assert "floor-hypercorn/floor" in header
    row = next(line for line in text.splitlines() if line.lstrip().startswith("100 "))
    assert "0.80x" in row
    assert "0.22x" in row
    short = "(trimcp-hypercorn/floor-hypercorn: trimcp's own cost under hypercorn; "
    assert f"  {short}floor-hypercorn/floor: hypercorn's own cost)" in text
    for (a, b), (_short, full) in PAIR_NOTES.items():
        assert f"http: {a}/{b}: {full}" in text


def test_the_plot_draws_the_ratio_lines(tmp_path: Path) -> None:
    from trimcp.bench._plot import _ratios, plot

    out = tmp_path / "bench.png"
    plot(_results(), str(out))
    assert out.read_bytes().startswith(b"\x89PNG")

    import matplotlib.pyplot as plt

    from trimcp.bench._report import FIGURES, aggregate

    figure, ax = plt.subplots()
    _ratios(ax, aggregate(_results()["samples"], FIGURES["throughput"][0][1]), "http")
    labels = ax.get_legend_handles_labels()[1]
    plt.close(figure)
    assert "trimcp-hypercorn/floor-hypercorn (trimcp's own cost under hypercorn)" in labels
    assert "floor-hypercorn/floor (hypercorn's own cost)" in labels
    assert "trimcp/floor" in labels


def test_command_line_run_of_both_floors(bench_run: BenchRun) -> None:
    arguments = ("--impl", "floor,floor-hypercorn", "--metric", "throughput,parked")
    data, stdout = bench_run("--transport", "http", *arguments, "--parked", "20")
    assert {r["implementation"] for r in data["samples"]} == {"floor", "floor-hypercorn"}
    for record in data["samples"]:
        assert "error" not in record, record
        assert record["era_free"] is True
        sample = record["sample"]
        if record["metric"] == "throughput":
            assert sample["server_cpu_s"] > 0  # the server ran in a process of its own
        else:
            assert (sample["observed"], sample["leak_free"]) == (20, True)
    block = data["summary"]["http"]
    assert block["throughput"]["calls/s"]["10"]["floor-hypercorn/floor"] > 0
    assert block["parked"]["memory per parked request, KiB"]["20"]["floor-hypercorn/floor"] > 0
    assert "floor-hypercorn/floor: hypercorn's own cost" in stdout

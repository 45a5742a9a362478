"""End to end: three ``trimcp serve --store redis://`` processes behind haproxy
(round-robin, no affinity), one session each from trimcp's client and from the official
Python SDK's, through reverse calls, resumptions, a task and a ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import trio

import trimcp
from trimcp.bench._fleet import render, run_fleet
from trimcp.nursery import HandlerContext

from ._fleet import Fleet, fleet
from ._services import RedisServer, require

SDK_SCRIPT = Path(__file__).with_name("_sdk_e2e.py")


async def _elicit(_ctx: HandlerContext, _params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"name": "Ada"})


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _routes(log: str) -> list[tuple[str, str, str]]:
    """(server, request line, Last-Event-ID) of each request haproxy logged."""
    out = []
    for line in log.splitlines():
        if " fleet/p" not in line or '"' not in line:
            continue
        server = line.split(" fleet/")[1].split()[0]
        request = line.split('"')[1]
        captured = line.split("{")[1].split("}")[0] if "{" in line else ""
        out.append((server, request, captured.split("|")[0]))
    return out


async def _sdk_session(url: str) -> dict[str, Any]:
    command = [sys.executable, str(SDK_SCRIPT), url]
    result = await trio.run_process(command, capture_stdout=True, capture_stderr=True, check=False)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    out: dict[str, Any] = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return out


async def _trimcp_session(farm: Fleet) -> None:
    running: list[int] = []
    started = trio.Event()

    async def on_log(params: trimcp.LoggingMessageParams) -> None:
        if str(params.data).isdigit():  # the held call says which process runs it
            running.append(int(params.data))
            started.set()

    transport = trimcp.streamable_http(farm.url)
    async with trimcp.open_client(
        transport, elicitation=_elicit, on_log=on_log, era="handshake"
    ) as client:
        pids = {_text(await client.call_tool("where", {})) for _ in range(6)}
        assert len(pids) == 3  # round-robin: every process served the session
        assert _text(await client.call_tool("form", {})).endswith("got accept: {'name': 'Ada'}")
        assert _text(await client.call_tool("poll", {})).startswith("finished on ")
        task = await client.tasks.call_tool("slow_task", {})
        done = await client.tasks.wait(task)  # polled through the balancer: every process
        assert _text(done).startswith("task done on ")

        # kill -9 the process running a call: the call fails clearly, the session goes on
        failure: list[BaseException] = []

        async def held() -> None:
            try:
                await client.call_tool("hold", {})
            except trimcp.McpError as exc:
                failure.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(held)
            await started.wait()
            os.kill(running[0], signal.SIGKILL)
        assert "stopped" in str(failure[0])
        after = {_text(await client.call_tool("where", {})) for _ in range(4)}
        assert str(running[0]) not in after
        assert len(after) == 2


async def test_a_fleet_behind_haproxy_serves_sessions_through_a_kill(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with fleet(redis_server.url, tmp_path, workers=3, lease_ttl=1.0) as farm:
            sdk = await _sdk_session(farm.url)
            assert sdk["version"] == "2025-11-25"
            assert len(set(sdk["pids"])) == 3
            assert sdk["form"].endswith("got accept: {'name': 'Ada'}")
            assert sdk["poll"].startswith("finished on ")
            await _trimcp_session(farm)
            routes = _routes(farm.balancer.text)
        resumes = [r for r in routes if r[1].startswith("GET") and r[2]]
        assert resumes, farm.balancer.text[-3000:]
        writer_of = farm.numbers()
        moved = [
            (served, writer_of[event_id.split(".")[0]])
            for served, _, event_id in resumes
            if not event_id.startswith("0-")  # request streams (not the GET stream)
        ]
        # resumptions that landed on another process than the one writing the stream
        assert any(served != writer for served, writer in moved), moved


def test_the_fleet_benchmark_measures_a_redis_fleet_behind_haproxy() -> None:
    require("redis-server")
    require("haproxy")
    results = run_fleet(
        deployments=(("redis", 2),), levels=(2,), repeats=1, warmup=0.1, duration=0.3,
        progress=lambda _line: None,
    )  # fmt: skip
    for tool in ("echo", "echo_sse"):
        sample = results[tool]["redis x2"][2]
        assert sample["calls_per_s"] > 0
        assert sample["workers_cpu_us"] > 0
    assert results["echo_sse"]["redis x2"][2]["redis_cpu_us"] > 0  # its events went there
    table = render(results)
    assert "fleet behind haproxy, echo_sse / calls/s" in table
    assert "redis x2" in table

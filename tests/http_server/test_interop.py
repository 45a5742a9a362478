"""Interop: the official Python SDK's Streamable HTTP client against serve_http."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

import trimcp

from ._fixture import make_server

SCRIPT = Path(__file__).with_name("_sdk_client.py")


async def test_python_sdk_client_tools_progress_cancel_sampling_elicitation(engine: str) -> None:
    server = make_server()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: trimcp.serve_http(
                    server, port=0, engine=engine, task_status=task_status
                )
            )
            assert port > 0
            result = await trio.run_process(
                [sys.executable, str(SCRIPT), f"http://127.0.0.1:{port}/mcp"],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
            assert result.returncode == 0, result.stderr.decode()[-3000:]
            out = json.loads(result.stdout.decode().strip().splitlines()[-1])
            # The cancelled call's handler was cancelled on the server.
            with trio.fail_after(5):
                await server.test_state["slow_done"].wait()
            assert not server.sessions  # the SDK's DELETE ended its session
            nursery.cancel_scope.cancel()
    assert out["version"] == "2025-11-25"
    assert {"echo", "chatty", "ask", "form"} <= set(out["tools"])
    assert out["echo"] == "hello"
    assert out["chatty"] == "done"
    assert out["progress"] == [0, 1, 2]
    assert out["ask"] == "model said: echo hi"
    assert out["form"] == "accept: {'name': 'Ada'}"
    assert out["after_cancel"] == "still alive"

"""trimcp list / call / inspect: in process against server files, and as real child
processes against a stdio command, an HTTP URL and a WebSocket URL (127.0.0.1 only)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import trio

from trimcp.cli import main

from ..stdio._child import raw_child

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "examples", "demo", "server.py")
NOTES = os.path.join(ROOT, "examples", "notes", "server.py")
TRIMCP = [sys.executable, "-m", "trimcp"]


def test_list_tools_of_a_server_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", DEMO]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "add  - Add two integers."
    assert [line.split()[0] for line in lines] == ["add", "count", "watch", "summarize", "confirm"]


def test_list_each_kind_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    for kind in ("resources", "templates", "prompts"):
        assert main(["list", f"{NOTES}:server", kind, "--json"]) == 0
        items = json.loads(capsys.readouterr().out)
        assert items, kind
        assert main(["list", NOTES, kind]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [line.split()[0] for line in lines] == [item["name"] for item in items]


def test_call_prints_text_progress_and_structured_content(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["call", DEMO, "count", "--args", '{"steps": 2, "delay": 0}']) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["counted to 2"]
    assert captured.err.splitlines() == ["progress 1/2 step 1 of 2", "progress 2/2 step 2 of 2"]
    assert main(["call", "--era", "handshake", DEMO, "add", '--args={"a": 2, "b": 3}']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == '{"result":5}'  # the text block
    assert json.loads("\n".join(lines[1:])) == {"result": 5}  # the structured content


def test_call_json_gives_the_raw_result(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", DEMO, "add", "--json", "--args", '{"a": 1, "b": 1}']) == 0
    raw = json.loads(capsys.readouterr().out)
    assert raw["structuredContent"] == {"result": 2}


def test_a_tool_error_exits_1_and_a_usage_error_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", DEMO, "add", "--args", '{"a": "x"}']) == 1
    assert main(["call", DEMO, "nope"]) == 1
    assert "Unknown tool" in capsys.readouterr().err
    for argv in (
        ["list"],
        ["list", DEMO, "widgets"],
        ["call", DEMO],
        ["call", DEMO, "add", "--args", "{nope"],
        ["call", DEMO, "add", "--bogus"],
        ["inspect", "missing.py"],
        ["inspect", DEMO, "--era", "sideways"],
    ):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err.startswith("trimcp: error: "), argv


def test_inspect_shows_everything(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--era", "handshake", NOTES]) == 0
    out = capsys.readouterr().out
    assert out.startswith("server:    notes 1.0\nrevision:  2025-11-25 (handshake era)\n")
    assert "\ntools (" in out
    assert "\nresources (" in out
    assert "\nprompts (" in out
    assert main(["inspect", "--json", NOTES]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["era"] == "stateless"
    assert report["protocolVersion"] == "2026-07-28"
    assert report["serverInfo"]["name"] == "notes"
    assert {"tools", "resources", "templates", "prompts", "capabilities"} <= set(report)


async def _run(*args: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(60):
        return await trio.run_process(
            [*TRIMCP, *args],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )


async def test_a_child_process_against_a_stdio_command() -> None:
    done = await _run("list", "tools", "--", *TRIMCP, "serve", DEMO)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split()[0] == "add"


@pytest.mark.parametrize("flag", ["--http", "--ws"])
async def test_a_child_process_against_a_url(flag: str) -> None:
    argv = [*TRIMCP, "serve", flag, "127.0.0.1:0", DEMO]
    with trio.fail_after(60):
        async with raw_child(argv, stdin=subprocess.DEVNULL) as child:
            line = await child.err.until(b"trimcp: serving demo on ")
            url = line.decode().rsplit(" on ", 1)[1].strip()
            assert url.startswith(("http://127.0.0.1:", "ws://127.0.0.1:"))
            done = await _run("inspect", "--era", "handshake", url)
            called = await _run("call", url, "add", "--args", '{"a": 20, "b": 22}')
            child.process.send_signal(signal.SIGINT)
            await child.process.wait()
    assert done.returncode == 0, done.stderr.decode()
    assert "revision:  2025-11-25 (handshake era)" in done.stdout.decode()
    assert called.returncode == 0, called.stderr.decode()
    assert called.stdout.decode().splitlines()[0] == '{"result":42}'


async def test_ctrl_c_cancels_the_call_cleanly() -> None:
    argv = [*TRIMCP, "call", DEMO, "watch", "--args", '{"interval": 0.01}']
    with trio.fail_after(60):
        async with raw_child(argv, stdin=subprocess.DEVNULL) as child:
            await child.err.until(b"progress 3")
            child.process.send_signal(signal.SIGINT)
            status = await child.process.wait()
            rest = await child.err.until(b"cancelled")
    assert status == 130
    assert b"trimcp: call cancelled" in rest

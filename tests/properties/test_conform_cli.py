"""``trimcp conform``: targets, budgets, exit statuses, replay files and ``--replay``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from trimcp.cli import main

HERE = Path(__file__).parent
BROKEN = [sys.executable, str(HERE / "broken_stdio_server.py")]
TRIMCP = [sys.executable, "-m", "trimcp", "serve", str(HERE / "conform_server.py")]


def test_a_remote_url_is_refused_without_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--url", "http://192.0.2.1:8000/mcp"]) == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_exactly_one_server_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform"]) == 2
    assert main(["conform", "--url", "http://127.0.0.1:1/mcp", "--", "x"]) == 2
    assert "exactly one server" in capsys.readouterr().err


def test_a_failure_exits_1_with_a_replay_that_reproduces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "replays"
    args = ["conform", "--max-examples", "5", "--steps", "5", "--out", str(out)]
    assert main([*args, "--", *BROKEN]) == 1
    printed = capsys.readouterr().out
    assert "FAILED session-survives" in printed
    replay_file = out / "session-survives.json"
    body = json.loads(replay_file.read_text())
    assert body["property"] == "session-survives"
    assert body["steps"][0]["op"] == "open"
    # The replay reproduces it against the broken server, and trimcp's server passes it.
    assert main(["conform", "--replay", str(replay_file), "--", *BROKEN]) == 1
    assert main(["conform", "--replay", str(replay_file), "--", *TRIMCP]) == 0
    assert "every property held" in capsys.readouterr().out


def test_a_conforming_server_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["conform", "--max-examples", "1", "--steps", "4", "--no-call-tools"]
    assert main([*args, "--", *TRIMCP]) == 0
    assert "properties held" in capsys.readouterr().out

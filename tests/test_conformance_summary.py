"""The CI judge of conformance runs (.ci/conformance_summary.py): a SKIPPED check of an
in-scope scenario fails it unless conformance/allowed-skips.yml allows that very check,
and an allowance that no longer matches is stale."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIST = """Server scenarios (test against a server):
  - ping [2025-06-18,2025-11-25]
  - tasks-status-notifications [extension]
Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
"""


def _summary() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "conformance_summary", ROOT / ".ci" / "conformance_summary.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _run(tmp_path: Path, checks: dict[str, list[str]], allowed: str | None) -> int:
    out = tmp_path / "out"
    for scenario, statuses in checks.items():
        folder = out / "server" / f"server-{scenario}-2026-01-01T00-00-00-000Z"
        folder.mkdir(parents=True)
        data = [{"id": f"c{i}", "name": f"Check{i}", "status": s} for i, s in enumerate(statuses)]
        (folder / "checks.json").write_text(json.dumps(data))
    (tmp_path / "list.txt").write_text(LIST)
    (tmp_path / "scope.txt").write_text("server ping\nserver tasks-status-notifications\n")
    (tmp_path / "expected.yml").write_text("server: []\nclient: []\n")
    argv = [
        "--out", str(out), "--list", str(tmp_path / "list.txt"),
        "--scope", str(tmp_path / "scope.txt"), "--expected", str(tmp_path / "expected.yml"),
        "--modes", "server",
    ]  # fmt: skip
    if allowed is not None:
        (tmp_path / "allowed.yml").write_text(allowed)
        argv += ["--allowed-skips", str(tmp_path / "allowed.yml")]
    module = _summary()
    result: int = module.run(argv)
    return result


ALLOW = "server:\n  - tasks-status-notifications Check0  # placeholder\nclient: []\n"


def test_a_skipped_check_in_scope_fails_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checks = {"ping": ["SUCCESS"], "tasks-status-notifications": ["SKIPPED"]}
    assert _run(tmp_path / "a", checks, None) == 1
    assert "1 skipped checks no allowance covers" in capsys.readouterr().out
    assert _run(tmp_path / "b", checks, ALLOW) == 0
    skipped_ping = {"ping": ["SUCCESS", "SKIPPED"], "tasks-status-notifications": ["SKIPPED"]}
    assert _run(tmp_path / "c", skipped_ping, ALLOW) == 1  # only that check is allowed


def test_a_stale_or_misplaced_allowance_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passing = {"ping": ["SUCCESS"], "tasks-status-notifications": ["SUCCESS"]}
    assert _run(tmp_path / "a", passing, ALLOW) == 1
    assert "no longer skips" in capsys.readouterr().out
    elsewhere = "server:\n  - initialize Check0  # not a server scenario in scope\n"
    assert _run(tmp_path / "b", passing, elsewhere) == 2
    no_reason = "server:\n  - ping Check0\n"
    assert _run(tmp_path / "c", passing, no_reason) == 2


def test_the_repository_allowances_parse_and_name_in_scope_checks() -> None:
    module = _summary()
    allowed = module.parse_allowed_skips((ROOT / "conformance" / "allowed-skips.yml").read_text())
    assert {(a.scenario, a.check) for a in allowed["server"]} == {
        ("tasks-status-notifications", "TasksStatusNotificationsScenario")
    }
    assert all(a.reason for mode in allowed.values() for a in mode)

"""``trimcp.cli.main`` in-process: argument parsing and target errors (exit 2, stderr)."""

from __future__ import annotations

import os

import pytest

from trimcp.cli import LoadError, load_server, main
from trimcp.cli import _main as cli_main
from trimcp.cli._loader import split_target
from trimcp.cli._main import parse_host_port

from ._child import FIXTURE, HERE


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (os.path.join(HERE, "missing.py"), "no such file"),
        (f"{FIXTURE}:nothing", "has no attribute 'nothing'"),
        (f"{FIXTURE}:mark", "is a function, not a trimcp.Server"),
        ("trimcp_no_such_module", "no module named 'trimcp_no_such_module'"),
        ("trimcp:Server", "is a type, not a trimcp.Server"),
        (f"{FIXTURE}:not-a-name", "is not a valid attribute name"),
    ],
)
def test_bad_targets_exit_2(target: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


def test_load_server_from_file_and_default_name() -> None:
    server = load_server(FIXTURE)
    assert server.info.name == "stdio-fixture"
    assert load_server(f"{FIXTURE}:server") is not None


def test_load_error_is_raised_for_non_servers() -> None:
    with pytest.raises(LoadError, match=r"not a trimcp\.Server"):
        load_server(f"{FIXTURE}:echo")


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("pkg.mod", ("pkg.mod", "server")),
        ("pkg.mod:app", ("pkg.mod", "app")),
        ("dir/file.py:srv", ("dir/file.py", "srv")),
        ("C:\\dir\\file.py", ("C:\\dir\\file.py", "server")),
    ],
)
def test_split_target(target: str, expected: tuple[str, str]) -> None:
    assert split_target(target) == expected


def test_parse_host_port() -> None:
    assert parse_host_port("127.0.0.1:8000") == ("127.0.0.1", 8000)
    assert parse_host_port("[::1]:9") == ("::1", 9)
    assert parse_host_port(":80") == ("127.0.0.1", 80)
    for bad in ("nohost", "h:x", "h:70000"):
        with pytest.raises(Exception, match=r"HOST:PORT|port"):
            parse_host_port(bad)


def test_missing_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "usage: trimcp" in capsys.readouterr().err


def test_http_flag_reports_unavailable_when_there_is_no_http_transport(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_main, "_http_server", lambda: None)
    assert main(["serve", "--http", "127.0.0.1:0", FIXTURE]) == 2
    assert "HTTP serving is not available yet" in capsys.readouterr().err

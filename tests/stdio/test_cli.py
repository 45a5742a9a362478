"""``trimcp.cli.main`` in-process: argument parsing and target errors (exit 2, stderr)."""

from __future__ import annotations

import os
import socket
import subprocess
from typing import Any

import pytest

from trimcp.cli import LoadError, load_server, main
from trimcp.cli._loader import split_target
from trimcp.cli._main import parse_host_port

from ._child import FIXTURE, HERE, serve_argv


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


def test_http_and_ws_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", FIXTURE])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "import trimcp\nserver = trimcp.Server('x')\nundefined_name + 1\n",
            "NameError: name 'undefined_name' is not defined ({path}, line 3)",
        ),
        ("def broken(:\n", "SyntaxError: invalid syntax ({path}, line 1)"),
        ("import trimcp_no_such_dependency\n", "ModuleNotFoundError: No module named"),
    ],
)
def test_a_target_that_fails_to_import_is_one_line_and_exit_2(
    source: str, message: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "target.py"
    path.write_text(source)
    assert main(["serve", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"trimcp: error: importing {path} failed: ")
    assert message.format(path=path) in line
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("flag", ["--http", "--ws"])
def test_a_busy_port_is_one_line_and_exit_2(flag: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*serve_argv(FIXTURE), flag, f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"trimcp: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )

"""Live progress of ``trimcp bench`` and ``trimcp conform``: a rich display on a terminal,
the same plain lines as ever anywhere else, and plain lines when rich is missing."""

from __future__ import annotations

import io
import re
import sys
from typing import Any

import pytest
from rich.console import Console

from trimcp import testing
from trimcp.cli import _progress, main
from trimcp.cli._progress import PlainProgress, RichProgress, progress, terminal_console

STYLE = re.compile(r"\x1b\[[0-9;]*m")
REDRAW = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
BENCH = [
    "bench", "--transport", "memory", "--impl", "floor", "--metric", "throughput",
    "--concurrency", "1,2", "--repeats", "1", "--warmup", "0.05", "--duration", "0.1",
]  # fmt: skip
CASE_LINE = re.compile(
    r"^\[  (\d)/2\] memory handshake throughput r0 floor +x(\d) +\d+ calls/s  p50 .* p99 .*$"
)


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _forced() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=160), buffer


def _plain(text: str) -> str:
    """What a terminal showed, each redraw of the live line on a line of its own."""
    return REDRAW.sub("\n", STYLE.sub("", text))


def test_plain_progress_prints_lines_and_nothing_else() -> None:
    stream = io.StringIO()
    with progress("run", total=3, stream=stream) as shown:
        assert isinstance(shown, PlainProgress)
        shown.update(1, "step 2", total=3)
        shown.line("step 1 done")
        shown.line("1 of 3", plain_only=True)
    assert stream.getvalue() == "step 1 done\n1 of 3\n"


def test_rich_progress_draws_the_bar_and_prints_lines_above_it() -> None:
    console, buffer = _forced()
    with progress("bench", total=3, console=console) as shown:
        assert isinstance(shown, RichProgress)
        shown.update(1, "memory trimcp x10")
        shown.line("[  1/3] memory trimcp x1   42 calls/s")
        shown.line("a count the live display shows instead", plain_only=True)
        shown.update(2, "memory trimcp x100")
    text = _plain(buffer.getvalue())
    assert "[  1/3] memory trimcp x1   42 calls/s" in text
    assert "a count the live display shows instead" not in text
    final = [line for line in text.splitlines() if "bench" in line][-1]
    assert "2/3" in final
    assert "memory trimcp x100" in final


def test_a_terminal_gets_rich_and_a_pipe_or_dumb_terminal_plain_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    assert isinstance(terminal_console(Terminal()), Console)
    assert terminal_console(io.StringIO()) is None
    monkeypatch.setenv("TERM", "dumb")
    assert terminal_console(Terminal()) is None


def test_without_rich_a_terminal_gets_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setitem(sys.modules, "rich.console", None)  # import rich.console fails
    stream = Terminal()
    assert terminal_console(stream) is None
    with progress("conform", total=2, stream=stream) as shown:
        assert isinstance(shown, PlainProgress)
        shown.update(1, "session 2")
        shown.line("conform: 2 sessions run", plain_only=True)
    assert stream.getvalue() == "conform: 2 sessions run\n"


def _fake_conformance(monkeypatch: pytest.MonkeyPatch, sessions: int) -> None:
    """A conformance run that starts ``sessions`` sessions and finds nothing."""

    def run(target: Any, **kwargs: Any) -> testing.Report:
        for n in range(1, sessions + 1):
            kwargs["on_example"](n)
        return testing.Report(target.describe(), sessions, 0.25, [])

    monkeypatch.setattr(testing, "run_conformance", run)


CONFORM = ["conform", "--max-examples", "25", "--", sys.executable, "server.py"]


def test_conform_prints_the_same_plain_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_conformance(monkeypatch, 25)
    assert main(CONFORM) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"conform: stdio: {sys.executable} server.py",
        "conform: 10 sessions run",
        "conform: 20 sessions run",
        "conform: 25 sessions in 0.2 s",
    ]
    assert captured.out.splitlines()[-1].endswith("properties held")


def test_conform_on_a_terminal_shows_sessions_live(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    console, buffer = _forced()
    monkeypatch.setattr(_progress, "terminal_console", lambda stream: console)
    _fake_conformance(monkeypatch, 25)
    assert main(CONFORM) == 0
    final = [line for line in _plain(buffer.getvalue()).splitlines() if "conform" in line][-1]
    assert "25/25" in final
    assert "0 failed" in final
    err = capsys.readouterr().err
    assert "sessions run" not in err + buffer.getvalue()  # the display shows the count
    assert "conform: 25 sessions in 0.2 s" in err


def test_bench_prints_one_parseable_line_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(BENCH) == 0
    captured = capsys.readouterr()
    matches = [CASE_LINE.match(line) for line in captured.err.splitlines()]
    assert [(m[1], m[2]) for m in matches if m] == [("1", "1"), ("2", "2")]
    assert "calls/s" in captured.out


def test_bench_on_a_terminal_shows_the_case_running_and_the_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    console, buffer = _forced()
    monkeypatch.setattr(_progress, "terminal_console", lambda stream: console)
    assert main(BENCH) == 0
    text = _plain(buffer.getvalue())
    # Each finished case's line scrolls above the display; the display counts cases.
    assert [m[1] for m in map(CASE_LINE.match, text.splitlines()) if m] == ["1", "2"]
    drawn = [line.rstrip() for line in text.splitlines() if re.match(r"^\S?\s+bench ━", line)]
    assert any("0/?" in line and line.endswith("memory: starting floor") for line in drawn)
    assert any("0/2" in line and line.endswith("throughput r0 floor x1") for line in drawn)
    assert any("1/2" in line and line.endswith("throughput r0 floor x2") for line in drawn)
    assert "2/2" in drawn[-1]
    assert "calls/s" in capsys.readouterr().out  # the tables stay on stdout

"""The programs of the how-to guides print what the pages show.

In-memory ones run in this Trio run on a mock clock; the graceful shutdown, which
serves HTTP on 127.0.0.1, runs as a process on the real clock; the conformance run is
synchronous (the machine runs its own Trio loops)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import trio

from ._load import load
from ._pages import SNIPPETS


def _shown(name: str) -> str:
    return (SNIPPETS / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("program", "output"),
    [
        ("howto/otel.py", "howto/otel.txt"),
        ("howto/middleware.py", "howto/middleware.txt"),
        ("howto/middleware_own.py", "howto/middleware_own.txt"),
        ("howto/tasks.py", "howto/tasks.txt"),
        ("howto/skills.py", "howto/skills.txt"),
        ("howto/apps.py", "howto/apps.txt"),
        ("howto/multi_process.py", "howto/multi_process.txt"),
    ],
)
async def test_in_memory_programs_print_the_page(
    program: str,
    output: str,
    capsys: pytest.CaptureFixture[str],
    autojump_clock: trio.testing.MockClock,
) -> None:
    await load(program).main()
    assert capsys.readouterr().out == _shown(output)


def test_the_conformance_run_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    load("howto/conform.py").main()
    assert capsys.readouterr().out == _shown("howto/conform.txt")


async def test_the_graceful_shutdown_prints_the_page() -> None:
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, SNIPPETS / "howto/shutdown.py"],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert done.stdout.decode() == _shown("howto/shutdown.txt")

"""The programs on the concept pages print what the pages show.

The in-memory ones run in this Trio run on a mock clock (their sleeps and timeouts cost
no time); the one that serves every transport runs as a process, on 127.0.0.1 only."""

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
        ("concepts/anatomy.py", "concepts/anatomy.txt"),
        ("concepts/cancellation.py", "concepts/cancellation.txt"),
        ("concepts/eras.py", "concepts/eras.txt"),
        ("concepts/limits.py", "concepts/limits.txt"),
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


async def test_every_transport_prints_the_page() -> None:
    with trio.fail_after(90):
        done = await trio.run_process(
            [sys.executable, SNIPPETS / "concepts/transports.py"],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert done.stdout.decode() == _shown("concepts/transports.txt")

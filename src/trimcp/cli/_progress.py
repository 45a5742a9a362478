"""Live progress of the long runs, ``trimcp bench`` and ``trimcp conform``.

On a terminal, with rich installed (the ``cli`` extra), a run shows one live line: a
spinner, the command, a bar, steps done out of the total, the time elapsed and the step
running now; the lines a run reports scroll above it. Anywhere else (a pipe, a file, CI,
``TERM=dumb``, or no rich) each reported line is printed as it is given, one per line,
so what scripts parse is the same whether rich is installed or not.

The interface the commands call is two methods: :meth:`PlainProgress.update` (steps done,
the step running now, the total once known; drawn live, never printed plainly) and
:meth:`PlainProgress.line` (a line for the record; ``plain_only`` for a line that only
stands in for the live display, such as a periodic count).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

__all__ = ["PlainProgress", "RichProgress", "progress", "terminal_console"]


class PlainProgress:
    """Progress as plain lines on ``stream``: each :meth:`line`, nothing else."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def update(self, completed: int, current: str = "", *, total: int | None = None) -> None:
        """``completed`` steps are done and ``current`` is running (``total`` in all, once
        known). Only a live display shows this; plain output has the lines instead."""

    def line(self, text: str, *, plain_only: bool = False) -> None:
        """Print ``text`` as one line (``plain_only``: unless a live display shows it)."""
        print(text, file=self.stream, flush=True)


class RichProgress:
    """Progress as a rich live display; lines are printed above it."""

    def __init__(self, bar: Progress, task: TaskID) -> None:
        self.bar = bar
        self.task = task

    def update(self, completed: int, current: str = "", *, total: int | None = None) -> None:
        """Redraw: ``completed`` of ``total`` steps done, ``current`` running."""
        if total is not None:
            self.bar.update(self.task, total=total)
        # Drawn at once (updates are per case, rare): a line printed next shows this state.
        self.bar.update(self.task, completed=completed, description=current, refresh=True)

    def line(self, text: str, *, plain_only: bool = False) -> None:
        """Print ``text`` above the display, unless it is ``plain_only``."""
        if not plain_only:
            self.bar.console.print(text, markup=False, highlight=False, soft_wrap=True)


def terminal_console(stream: TextIO) -> Console | None:
    """A rich console on ``stream`` if it is a terminal that can redraw and rich is
    installed; ``None`` (plain lines) otherwise."""
    if not stream.isatty() or os.environ.get("TERM") == "dumb":
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream)


@contextmanager
def progress(
    title: str,
    *,
    total: int | None = None,
    stream: TextIO | None = None,
    console: Console | None = None,
) -> Iterator[PlainProgress | RichProgress]:
    """Report a run's progress for the ``with`` block; a live display ends with it.

    ``console`` forces a rich display on that console (tests render into a string);
    without it, :func:`terminal_console` of ``stream`` (stderr by default) decides.
    """
    stream = sys.stderr if stream is None else stream
    console = terminal_console(stream) if console is None else console
    if console is None:
        yield PlainProgress(stream)
        return
    bar = _rich_bar(console)
    with bar:
        yield RichProgress(bar, bar.add_task("", total=total, title=title))


def _rich_bar(console: Console) -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.fields[title]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=console,
        # stdout keeps what it is for (tables, results); only stderr is the display's.
        redirect_stdout=False,
        redirect_stderr=True,
    )

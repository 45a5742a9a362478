"""stdio: a server on its own stdin/stdout, and a client driving a child process.

Server side, :func:`open_stdio_channel` takes private duplicates of file descriptors 0
and 1 and points descriptor 1 at stderr for as long as it runs, so a stray ``print()``
or a subprocess that inherits stdout cannot corrupt the protocol stream (the spec forbids
anything but MCP messages on stdout). When stdin closes the session ends and the server
returns promptly.

Client side, :class:`StdioCommand` starts the server as a child process. Leaving its
``connect()`` block shuts the child down as the spec's lifecycle says: close its stdin,
wait up to 2 s, SIGTERM, wait up to 2 s, SIGKILL. A child that dies early ends the
channel, so every pending call fails at once.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import final

import attrs
import trio

from trimcp.nursery import MessageChannel

from ._stream import StreamChannel

__all__ = [
    "CLIENT_MAX_LINE",
    "SERVER_MAX_LINE",
    "StdioCommand",
    "open_stdio_channel",
    "stdio_command",
]

#: Longest line a server accepts from its client.
SERVER_MAX_LINE = 4 * 1024 * 1024
#: Longest line a client accepts from its server (tool results can be large).
CLIENT_MAX_LINE = 10 * 1024 * 1024
#: Seconds between each step of the child shutdown sequence.
SHUTDOWN_STEP = 2.0


@asynccontextmanager
async def open_stdio_channel(*, max_line: int = SERVER_MAX_LINE) -> AsyncIterator[StreamChannel]:
    """A channel over this process's stdin and stdout (see the module doc)."""
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    saved_stdout = os.dup(1)
    os.dup2(2, 1)
    channel = StreamChannel(
        trio.lowlevel.FdStream(out_fd), trio.lowlevel.FdStream(in_fd), max_line=max_line
    )
    try:
        yield channel
    finally:
        with trio.CancelScope(shield=True):
            await channel.aclose()
        # Text that print() left in sys.stdout's buffer was meant for descriptor 1 while
        # it pointed at stderr; flushed after the restore it would land on stdout.
        _flush_python_stdout()
        os.dup2(saved_stdout, 1)
        os.close(saved_stdout)


def _flush_python_stdout() -> None:
    stdout = sys.stdout
    if stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            stdout.flush()


async def _shut_down(process: trio.Process) -> None:
    """Close stdin, then SIGTERM, then SIGKILL, each after ``SHUTDOWN_STEP`` seconds."""
    with trio.CancelScope(shield=True):
        if process.stdin is not None:
            with contextlib.suppress(trio.BrokenResourceError):
                await process.stdin.aclose()
        with trio.move_on_after(SHUTDOWN_STEP):
            await process.wait()
            return
        process.terminate()
        with trio.move_on_after(SHUTDOWN_STEP):
            await process.wait()
            return
        process.kill()
        await process.wait()


@final
@attrs.frozen
class StdioCommand:
    """A server to start as a child process and talk to over its stdin/stdout.

    Its stderr is inherited (servers log there).
    """

    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    max_line: int = CLIENT_MAX_LINE

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MessageChannel]:
        process = await trio.lowlevel.open_process(
            list(self.argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(self.env) if self.env is not None else None,
            cwd=self.cwd,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        channel = StreamChannel(process.stdin, process.stdout, max_line=self.max_line)
        try:
            yield channel
        finally:
            await _shut_down(process)
            with trio.CancelScope(shield=True):
                await process.stdout.aclose()


def stdio_command(
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> StdioCommand:
    """Describe a server started as ``command args...``; pass it to ``open_client``."""
    return StdioCommand((command, *args), env=env, cwd=cwd)

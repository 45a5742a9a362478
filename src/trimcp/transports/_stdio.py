"""stdio: a server on its own stdin/stdout, and a client driving a child process.

Server side, :func:`open_stdio_channel` takes private duplicates of file descriptors 0
and 1 and points descriptor 1 at stderr for as long as it runs, so a stray ``print()``
or a subprocess that inherits stdout cannot corrupt the protocol stream (the spec forbids
anything but MCP messages on stdout). When stdin closes the session ends and the server
returns promptly.

Client side, :class:`StdioCommand` starts the server as a child process. Leaving its
``connect()`` block shuts the child down as the spec's lifecycle says: close its stdin,
wait up to 2 s, SIGTERM, wait up to 2 s, SIGKILL. Its stdout stays open and is read
(and dropped) until it ends or the child exits, so a server that still writes while it
shuts down (a last log line, an answer already on its way) never meets a closed pipe
(``EPIPE``). A child that dies early ends the channel, so every pending call fails at
once.
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

from ._pipes import DEFAULT_PIPE_SIZE, widen_pipe, widen_stream
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
async def open_stdio_channel(
    *, max_line: int = SERVER_MAX_LINE, pipe_size: int | None = DEFAULT_PIPE_SIZE
) -> AsyncIterator[StreamChannel]:
    """A channel over this process's stdin and stdout (see the module doc).

    Pipes among them are asked for ``pipe_size`` bytes of buffer (see
    :mod:`._pipes`; ``None`` leaves them as they are)."""
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    widen_pipe(in_fd, pipe_size)
    widen_pipe(out_fd, pipe_size)
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


@final
class _ChildOutput(trio.abc.ReceiveStream):
    """The child's stdout as its channel sees it.

    Closing it (the session is over) ends the channel's reading at once but leaves
    the pipe open: the pipe is the ``connect()`` block's to drain and close once the
    child has exited.
    """

    def __init__(self, pipe: trio.abc.ReceiveStream) -> None:
        self._pipe = pipe
        self._closed = False
        self._reading: trio.CancelScope | None = None

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if not self._closed:
            with trio.CancelScope() as self._reading:
                return await self._pipe.receive_some(max_bytes)
        await trio.lowlevel.checkpoint()
        raise trio.ClosedResourceError("the channel to the child process was closed")

    async def aclose(self) -> None:
        self._closed = True
        if self._reading is not None:
            self._reading.cancel()  # the read in progress ends as if closed
        await trio.lowlevel.checkpoint()


async def _shut_down(process: trio.Process, output: trio.abc.ReceiveStream) -> None:
    """Close stdin, then SIGTERM, then SIGKILL, each after ``SHUTDOWN_STEP`` seconds;
    meanwhile read what the child still writes, until its stdout ends or it exits."""
    with trio.CancelScope(shield=True):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_discard, output)
            await _stop(process)
            nursery.cancel_scope.cancel()  # exited, but a grandchild may hold stdout
        await output.aclose()


async def _discard(output: trio.abc.ReceiveStream) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while await output.receive_some(65536):
            pass


async def _stop(process: trio.Process) -> None:
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
    #: Bytes of buffer asked for each pipe to and from the child (see :mod:`._pipes`);
    #: ``None`` leaves the system's default.
    pipe_size: int | None = DEFAULT_PIPE_SIZE

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
        widen_stream(process.stdin, self.pipe_size)
        widen_stream(process.stdout, self.pipe_size)
        output = _ChildOutput(process.stdout)
        channel = StreamChannel(process.stdin, output, max_line=self.max_line)
        try:
            yield channel
        finally:
            await _shut_down(process, process.stdout)


def stdio_command(
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> StdioCommand:
    """Describe a server started as ``command args...``; pass it to ``open_client``."""
    return StdioCommand((command, *args), env=env, cwd=cwd)

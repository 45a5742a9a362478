"""Targets over a byte stream: a trimcp Server in-process, or any command over stdio.

Both speak NDJSON: one frame per line, written whole: the session's main task and its
drain (answering the server's requests) may send at once, so a lock serialises them.
The in-process target serves a :class:`trimcp.server.Server` over a Trio memory stream
pair in the same run (so a test can use a virtual clock); the stdio target starts the
command as a child process, and closing the connection closes its stdin and waits for
it to exit, as the stdio transport's shutdown sequence says.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

import trio
import trio.testing

from trimcp.server import Server
from trimcp.transports import StreamChannel

from ._inbox import Inbound, Inbox, lines

__all__ = ["MAX_LINE", "MemoryTarget", "StdioTarget"]

#: Longest line accepted from a server (10 MiB); a longer one is reported.
MAX_LINE = 10 << 20
#: Bytes of the child's stderr kept for reports.
STDERR_TAIL = 16 << 10
#: Seconds a server may take to end its session once the client closed its side: it
#: may first finish and answer the requests it had read (trimcp's grace is 5 s).
CLOSE_GRACE = 10.0


async def _read_lines(stream: trio.abc.ReceiveStream, inbox: Inbox, state: dict[str, str]) -> None:
    buffer = bytearray()
    try:
        while chunk := await stream.receive_some(65536):
            found, too_long = lines(buffer, bytes(chunk), MAX_LINE)
            for line in found:
                inbox.put(Inbound(line))
            if too_long:
                state["dead"] = f"the server sent a line over {MAX_LINE} bytes"
                return
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    state.setdefault("dead", "the server closed its output")


class _MemoryConnection:
    def __init__(self, stream: trio.StapledStream[Any, Any]) -> None:
        self.inbox = Inbox()
        self._stream = stream
        self.state: dict[str, str] = {}
        self.served = trio.Event()
        self._sending = trio.Lock()

    async def send(self, data: bytes, index: int) -> None:
        try:
            async with self._sending:
                await self._stream.send_all(data + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.state.setdefault("dead", "the server closed its input")

    def negotiated(self, version: str) -> None:
        return None

    async def abort(self) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self._stream.aclose()

    def dead(self) -> str | None:
        if self.served.is_set():
            return "the server ended the session"
        return self.state.get("dead")

    async def close(self) -> str | None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self._stream.send_stream.aclose()
        with trio.move_on_after(CLOSE_GRACE):
            await self.served.wait()
            return None
        return f"the session did not end within {CLOSE_GRACE:g} s of the client closing its side"


class MemoryTarget:
    """A :class:`trimcp.server.Server` in this Trio run, over NDJSON on memory streams."""

    clock = "mock"

    def __init__(self, server: Server) -> None:
        self.server = server

    def describe(self) -> str:
        return f"in-memory {self.server.info.name}"

    async def connect(self, nursery: trio.Nursery) -> _MemoryConnection:
        ours, theirs = trio.testing.memory_stream_pair()
        connection = _MemoryConnection(ours)

        async def serve() -> None:
            try:
                await self.server.serve_channel(StreamChannel(theirs, theirs))
            except Exception as exc:  # a crash is a finding, not the end of the run
                connection.state["dead"] = f"the server raised {exc!r}"
            finally:
                connection.served.set()

        nursery.start_soon(serve)
        nursery.start_soon(_read_lines, ours, connection.inbox, connection.state)
        return connection


class _StdioConnection:
    def __init__(self, process: trio.Process) -> None:
        self.inbox = Inbox()
        self.process = process
        self.state: dict[str, str] = {}
        self.stderr = bytearray()
        self._sending = trio.Lock()

    async def send(self, data: bytes, index: int) -> None:
        assert self.process.stdin is not None
        try:
            async with self._sending:
                await self.process.stdin.send_all(data + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.state.setdefault("dead", "the server closed its input")

    def negotiated(self, version: str) -> None:
        return None

    def dead(self) -> str | None:
        code = self.process.returncode
        if code is not None:
            return f"the server process exited with status {code}"
        return self.state.get("dead")

    async def drain_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            while chunk := await self.process.stderr.receive_some(65536):
                self.stderr += chunk
                del self.stderr[:-STDERR_TAIL]
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return

    async def close(self) -> str | None:
        assert self.process.stdin is not None
        problem = None
        with trio.CancelScope(shield=True):
            await self.process.stdin.aclose()
            with trio.move_on_after(CLOSE_GRACE) as waiting:
                await self.process.wait()
            if waiting.cancelled_caught:
                problem = f"the server did not exit within {CLOSE_GRACE:g} s of its stdin closing"
                self.process.kill()
            await self.process.wait()
            await self._close_pipes()
        return problem

    async def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await pipe.aclose()

    async def abort(self) -> None:
        """End the process at once (teardown after a failure)."""
        if self.process.returncode is None:
            self.process.kill()
        with trio.CancelScope(shield=True):
            await self.process.wait()
            await self._close_pipes()


class StdioTarget:
    """A command that serves MCP on its stdin and stdout; one process per session."""

    clock = "real"

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        if not command:
            raise ValueError("an empty command")
        self.command = list(command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd

    def describe(self) -> str:
        return "stdio: " + " ".join(self.command)

    async def connect(self, nursery: trio.Nursery) -> _StdioConnection:
        process = await trio.lowlevel.open_process(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
        )
        connection = _StdioConnection(process)
        assert process.stdout is not None
        nursery.start_soon(_read_lines, process.stdout, connection.inbox, connection.state)
        nursery.start_soon(connection.drain_stderr)
        return connection

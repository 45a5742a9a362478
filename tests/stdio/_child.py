"""Raw child processes for the stdio tests: JSON lines in, JSON lines and stderr out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixture_server.py")
FAKE = os.path.join(HERE, "fake_server.py")
#: The ``initialize`` request of a raw client (id 0).
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def serve_argv(path: str = FIXTURE) -> list[str]:
    """``python -m trimcp serve path``."""
    return [sys.executable, "-m", "trimcp", "serve", path]


class LineReader:
    """Split a byte stream into lines, keeping everything that was read."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.lines: list[bytes] = []

    async def line(self) -> bytes | None:
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        self.lines.append(line)
        return line

    async def until(self, needle: bytes) -> bytes:
        """Read lines until one contains ``needle``."""
        while True:
            line = await self.line()
            if line is None:
                raise AssertionError(f"EOF before {needle!r}; read {self.lines!r}")
            if needle in line:
                return line

    async def rest(self) -> list[bytes]:
        """Read to EOF; every line read so far."""
        while await self.line() is not None:
            pass
        if self.buffer:
            self.lines.append(self.buffer)
            self.buffer = b""
        return self.lines


class RawChild:
    """A server child driven line by line, with stdout and stderr readers."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        assert process.stdout is not None
        assert process.stderr is not None
        self.out = LineReader(process.stdout)
        self.err = LineReader(process.stderr)

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(json.dumps(message).encode() + b"\n")

    async def message(self) -> dict[str, Any]:
        line = await self.out.line()
        assert line is not None, "the server closed stdout"
        value: dict[str, Any] = json.loads(line)
        return value

    async def response(self, request_id: int) -> dict[str, Any]:
        """The response to ``request_id``, skipping notifications."""
        while True:
            message = await self.message()
            if message.get("id") == request_id and "method" not in message:
                return message

    async def initialize(self) -> dict[str, Any]:
        await self.send(INITIALIZE)
        result = await self.response(0)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    async def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> None:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {
                    "name": name,
                    "arguments": arguments,
                    "_meta": {"progressToken": f"p{request_id}"},
                },
            }
        )

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()


@asynccontextmanager
async def raw_child(
    argv: list[str], *, stdin: int | None = subprocess.PIPE, env: dict[str, str] | None = None
) -> AsyncIterator[RawChild]:
    """Start ``argv`` with piped stdout/stderr; kill it (if still running) on exit."""
    process = await trio.lowlevel.open_process(
        argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        yield RawChild(process)
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    await stream.aclose()

"""``trimcp serve`` as a real child process: the CLI, stdin EOF, EPIPE, stray output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

import trimcp

from ._child import FIXTURE, HERE, RawChild, raw_child, serve_argv
from .fixture_server import EOF_GRACE


async def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(10):
        return await trio.run_process(
            [sys.executable, "-m", "trimcp", *args],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )


async def test_version_and_bad_target_in_a_real_process() -> None:
    import trimcp

    done = await run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.decode().strip() == f"trimcp {trimcp.__version__}"
    done = await run_cli("serve", os.path.join(HERE, "missing.py"))
    assert done.returncode == 2
    assert done.stdout == b""
    assert "no such file" in done.stderr.decode()


async def test_serve_http_on_an_ephemeral_port() -> None:
    """``--http 127.0.0.1:0`` prints the bound URL on stderr and serves the tools there."""
    with trio.fail_after(15):
        async with raw_child(
            [sys.executable, "-m", "trimcp", "serve", "--http", "127.0.0.1:0", FIXTURE],
            stdin=subprocess.DEVNULL,
        ) as child:
            line = await child.err.until(b"trimcp: serving stdio-fixture on http://")
            url = line.decode().rsplit(" on ", 1)[1].strip()
            assert url.startswith("http://127.0.0.1:")
            assert url.endswith("/mcp")
            async with trimcp.open_client(
                trimcp.transports.streamable_http(url), era="handshake"
            ) as client:
                result = await client.call_tool("echo", {"text": "over http"})
                assert result.content[0] == trimcp.TextContent(text="over http")
            child.process.send_signal(signal.SIGINT)
            with trio.fail_after(5):
                await child.process.wait()
            errors = b"\n".join(await child.err.rest()).decode()
            assert child.process.returncode == 0, errors
            assert "Traceback" not in errors
            assert await child.out.rest() == []


_SERVE_HTTP_LOGGED = [
    *[sys.executable, "-m", "trimcp", "--log-level", "INFO"],
    *["serve", "--http", "127.0.0.1:0", FIXTURE],
]


@asynccontextmanager
async def _held_call_then_sigterm() -> AsyncIterator[tuple[RawChild, trimcp.Client, list[object]]]:
    """A ``serve --http`` child with one call held in its ``hold`` tool, just sent
    SIGTERM. Yields the child, the client and the held call's outcome (its text or its
    error, once it ends); on exit the child must have ended with status 0, cleanly."""
    async with raw_child(_SERVE_HTTP_LOGGED, stdin=subprocess.PIPE) as child:
        line = await child.err.until(b"trimcp: serving stdio-fixture on http://")
        url = line.decode().rsplit(" on ", 1)[1].strip()
        outcome: list[object] = []
        async with trimcp.open_client(
            trimcp.transports.streamable_http(url), era="handshake"
        ) as client:

            async def held() -> None:
                try:
                    result = await client.call_tool("hold")
                    outcome.append(result.content[0].text)  # type: ignore[union-attr]
                except trimcp.McpError as exc:
                    outcome.append(exc)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(held)
                await child.err.until(b"MARK hold started")
                child.process.send_signal(signal.SIGTERM)
                await child.err.until(b"shutting down on SIGTERM")
                yield child, client, outcome
        await child.process.wait()
        errors = b"\n".join(await child.err.rest()).decode()
        assert child.process.returncode == 0, errors
        assert "Traceback" not in errors


async def test_serve_http_shuts_down_gracefully_on_sigterm() -> None:
    """SIGTERM lets a running call finish and answer, refuses new calls, then exits 0."""
    with trio.fail_after(20):
        async with _held_call_then_sigterm() as (child, client, outcome):
            with pytest.raises(trimcp.McpError, match="shutting down"):
                await client.call_tool("echo", {"text": "too late"})
            assert child.process.stdin is not None
            await child.process.stdin.send_all(b"go\n")  # the held call finishes
    assert outcome == ["released"]


async def test_a_second_signal_stops_at_once() -> None:
    """SIGINT during the grace ends the process without waiting for the running call."""
    with trio.fail_after(20):
        async with _held_call_then_sigterm() as (child, _client, outcome):
            child.process.send_signal(signal.SIGINT)
            await child.err.until(b"stopping at once on SIGINT")
            with trio.fail_after(4):  # well within the 5 s grace
                await child.process.wait()
    assert len(outcome) == 1  # the connection went away with the process
    assert isinstance(outcome[0], trimcp.ConnectionClosedError)


async def test_serve_websocket_on_an_ephemeral_port() -> None:
    """``--ws 127.0.0.1:0`` prints the bound ws:// URL on stderr and serves the tools there."""
    with trio.fail_after(15):
        async with raw_child(
            [sys.executable, "-m", "trimcp", "serve", "--ws", "127.0.0.1:0", FIXTURE],
            stdin=subprocess.DEVNULL,
        ) as child:
            line = await child.err.until(b"trimcp: serving stdio-fixture on ws://")
            url = line.decode().rsplit(" on ", 1)[1].strip()
            assert url.startswith("ws://127.0.0.1:")
            async with trimcp.open_client(trimcp.websocket(url), era="handshake") as client:
                result = await client.call_tool("echo", {"text": "over ws"})
                assert result.content[0] == trimcp.TextContent(text="over ws")
            child.process.send_signal(signal.SIGINT)
            with trio.fail_after(5):
                await child.process.wait()
            errors = b"\n".join(await child.err.rest()).decode()
            assert child.process.returncode == 0, errors
            assert "Traceback" not in errors


async def test_module_target_serves() -> None:
    """``package.module:NAME`` targets import normally (here with the file's folder on the path)."""
    with trio.fail_after(10):
        done = await trio.run_process(
            [sys.executable, "-m", "trimcp", "serve", "fixture_server:server"],
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            cwd=HERE,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""


async def test_stdin_eof_cancels_in_flight_after_the_grace_and_exits_0() -> None:
    """B23: stdin closes with a handler in flight: it gets ``eof_grace`` (1 s in the
    fixture) to finish, is then cancelled, and the process exits 0."""
    with trio.fail_after(10):
        async with raw_child(serve_argv()) as child:
            await child.initialize()
            await child.call(1, "hang", {})
            await child.err.until(b"MARK hang started 1")
            await child.close_stdin()
            with trio.fail_after(2 + EOF_GRACE):
                await child.process.wait()
                errors = await child.err.rest()
            assert child.process.returncode == 0
            assert b"MARK hang cancelled 1" in errors
            # A cancelled request gets no response.
            assert all(json.loads(line).get("id") != 1 for line in await child.out.rest())


async def test_stdin_devnull_exits_0_at_once() -> None:
    """B23: a server whose stdin is /dev/null sees EOF at once and exits 0.

    The bound covers the interpreter's start too, so it is generous: what it rules out
    is a server that waits for input that can never come."""
    with trio.fail_after(20):
        async with raw_child(serve_argv(), stdin=subprocess.DEVNULL) as child:
            with trio.fail_after(10):
                await child.process.wait()
            assert child.process.returncode == 0
            assert await child.out.rest() == []


async def test_stdout_epipe_ends_the_server() -> None:
    """B24: the reader of stdout goes away; the next send fails, the server exits once."""
    with trio.fail_after(10):
        async with raw_child(serve_argv()) as child:
            await child.initialize()
            await child.call(1, "chatter", {})
            await child.err.until(b"MARK chatter started")
            assert child.process.stdout is not None
            await child.process.stdout.aclose()
            with trio.fail_after(3):
                await child.process.wait()
                errors = b"\n".join(await child.err.rest())
            assert child.process.returncode == 0, errors.decode()
            assert b"MARK chatter ended" in errors
            # No crash loop: at most one logged traceback, and little output overall.
            assert errors.count(b"Traceback") <= 1
            assert len(errors) < 20_000


async def test_stray_stdout_writes_go_to_stderr() -> None:
    """``print()``, raw writes to fd 1 and child processes never corrupt the protocol.

    Python's stdout is block-buffered here (no ``PYTHONUNBUFFERED``), so a ``print`` is
    still in its buffer when the session ends; it must be flushed to stderr, not later
    to the restored stdout.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with trio.fail_after(10):
        async with raw_child(serve_argv(), env=env) as child:
            await child.initialize()
            await child.call(1, "noisy", {"text": "hi"})
            response = await child.response(1)
            assert response["result"]["content"] == [{"type": "text", "text": "hi"}]
            await child.close_stdin()
            lines = await child.out.rest()
            await child.process.wait()
            errors = b"\n".join(await child.err.rest())
        assert child.process.returncode == 0
        for line in lines:
            json.loads(line)  # every stdout line is a protocol message
        assert b"stray" not in b"".join(lines)
        assert b"stray os.write" in errors
        assert b"stray child output" in errors
        assert b"stray print: hi" in errors


async def test_serve_stdio_shuts_down_gracefully() -> None:
    """``serve_stdio`` in a real process: after ``server.shutdown()`` a new request gets
    ``-32000``, the call running in the grace is answered, stdout ends, and the serve
    function returns."""
    argv = [sys.executable, os.path.join(HERE, "shutdown_server.py")]
    with trio.fail_after(15):
        async with raw_child(argv) as child:
            await child.initialize()
            await child.call(1, "held", {})
            await child.err.until(b"MARK held started")
            await child.call(2, "stop", {})
            stopping = await child.response(2)
            assert stopping["result"]["content"][0]["text"] == "stopping"
            await child.err.until(b"MARK shutdown requested")
            await child.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            lines = []
            while (line := await child.out.line()) is not None:
                lines.append(json.loads(line))
            refusal, answer = lines  # then stdout ended
            assert refusal["id"] == 3
            assert refusal["error"]["code"] == -32000
            assert answer["id"] == 1
            assert answer["result"]["content"][0]["text"] == "finished in the grace"
            assert await child.process.wait() == 0
            errors = b"\n".join(await child.err.rest())
            assert errors.index(b"MARK shutdown returned") < errors.index(
                b"MARK serve_stdio returned"
            )

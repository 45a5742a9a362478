"""B25: a trimcp client against misbehaving servers (``fake_server.py``)."""

from __future__ import annotations

import os
import sys

import pytest
import trio

import trimcp

from ._child import FAKE


def fake(mode: str, *args: str) -> trimcp.transports.StdioCommand:
    return trimcp.stdio_command(sys.executable, FAKE, mode, *args)


async def _time_to_shut_down(command: trimcp.transports.StdioCommand) -> float:
    """Connect and ping; the seconds leaving the client block then took."""
    async with trimcp.open_client(command, era="handshake") as client:
        await client.ping()
        start = trio.current_time()
    return trio.current_time() - start


async def test_server_exiting_mid_reply_fails_pending_calls_at_once() -> None:
    with trio.fail_after(10):
        async with trimcp.open_client(fake("exit-mid-reply"), era="handshake") as client:
            start = trio.current_time()
            with pytest.raises(trimcp.ConnectionClosedError):
                await client.call_tool("anything", {})
            assert trio.current_time() - start < 1.0
            assert client.session.pending == 0
            # Later calls fail the same way rather than hang.
            with pytest.raises(trimcp.ConnectionClosedError):
                await client.ping()


async def test_non_json_noise_is_answered_and_skipped() -> None:
    """Noise lines get a -32700 each and are dropped; real messages still flow."""
    with trio.fail_after(10):
        async with trimcp.open_client(fake("noise"), era="handshake") as client:
            result = await client.call_tool("anything", {})
            block = result.content[0]
            assert isinstance(block, trimcp.TextContent)
            # Two noise lines came before the call: the server received two errors.
            assert block.text == "errors seen: 2"
            await client.ping()
            again = await client.call_tool("anything", {})
            assert isinstance(again.content[0], trimcp.TextContent)
            assert again.content[0].text == "errors seen: 3"


async def test_server_ignoring_sigterm_is_killed(tmp_path: os.PathLike[str]) -> None:
    """Shutdown: close stdin, 2 s, SIGTERM (ignored), 2 s, SIGKILL."""
    pid_file = os.path.join(tmp_path, "pid")
    with trio.fail_after(15):
        took = await _time_to_shut_down(fake("ignore-sigterm", pid_file))
    pid = int(await trio.Path(pid_file).read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone and reaped
    assert 3.5 < took < 6.0


async def test_a_server_writing_while_it_shuts_down_is_read_to_the_end(
    tmp_path: os.PathLike[str],
) -> None:
    """Leaving the block closes the child's stdin only: its stdout is read until it ends,
    so what the server writes during its shutdown never meets a closed pipe."""
    report = os.path.join(tmp_path, "report")
    with trio.fail_after(10):
        took = await _time_to_shut_down(fake("write-at-exit", report))
    assert await trio.Path(report).read_text() == "written"
    assert took < 1.5  # it exited by itself: no SIGTERM was needed


async def test_a_server_that_closes_its_input_fails_the_next_call_at_once() -> None:
    """The write fails (EPIPE): the channel ends its reading too, though the child's
    stdout is still open, and the call fails instead of waiting for its timeout."""
    with trio.fail_after(10):
        async with trimcp.open_client(fake("close-stdin"), era="handshake") as client:
            await client.ping()
            start = trio.current_time()
            with pytest.raises(trimcp.ConnectionClosedError):
                await client.call_tool("anything", {})
            assert trio.current_time() - start < 1.0
            assert client.session.pending == 0

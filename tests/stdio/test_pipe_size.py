"""stdio pipes ask for a larger buffer (Linux): the client for the pipes it makes for
its child, the server for the ones it was given; ``None`` leaves them alone, and a
descriptor that is not a pipe is left as it is."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import textwrap

import attrs
import pytest
import trio

from trimcp.transports import StdioCommand
from trimcp.transports._pipes import DEFAULT_PIPE_SIZE, widen_pipe
from trimcp.wire import Notification

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pipe sizes are Linux's")

# A child that tells its pipes' sizes as a notification, then waits for its stdin's end.
_REPORTER = textwrap.dedent(
    """
    import fcntl, json, sys
    sizes = [fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) for fd in (0, 1)]
    note = {"jsonrpc": "2.0", "method": "notifications/sizes", "params": {"sizes": sizes}}
    sys.stdout.write(json.dumps(note) + "\\n")
    sys.stdout.flush()
    sys.stdin.read()
    """
)

# A server-side channel over the pipes its parent made: it says it is open, then waits
# for the end of its input.
_SERVER_SIDE = textwrap.dedent(
    """
    import trio
    from trimcp.transports import open_stdio_channel
    from trimcp.wire import Notification

    async def main():
        async with open_stdio_channel() as channel:
            await channel.send(Notification(method="notifications/open"))
            try:
                await channel.receive()
            except trio.EndOfChannel:
                pass

    trio.run(main)
    """
)


def test_a_pipe_gets_the_size_asked_for_or_keeps_its_own() -> None:
    read_end, write_end = os.pipe()
    try:
        before = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
        assert widen_pipe(write_end, None) is None
        assert fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ) == before
        size = widen_pipe(write_end, 256 * 1024)
        assert size == fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) >= 256 * 1024
        # A size fcntl cannot carry (it would wrap to a tiny one): refused, size kept.
        assert widen_pipe(write_end, 1 << 40) == size
    finally:
        os.close(read_end)
        os.close(write_end)
    left, right = socket.socketpair()
    with left, right:
        assert widen_pipe(left.fileno()) is None  # not a pipe


async def _child_sizes(command: StdioCommand) -> list[int]:
    async with command.connect() as channel:
        with trio.fail_after(30):
            note = await channel.receive()
    assert isinstance(note, Notification)
    assert note.params is not None
    sizes: list[int] = note.params["sizes"]
    return sizes


async def test_the_client_widens_the_pipes_to_its_child() -> None:
    command = StdioCommand((sys.executable, "-c", _REPORTER))
    assert command.pipe_size == DEFAULT_PIPE_SIZE
    default = 64 * 1024
    sizes = await _child_sizes(command)
    assert sizes == [DEFAULT_PIPE_SIZE] * 2 or min(sizes) > default  # within the user's limit
    assert await _child_sizes(attrs.evolve(command, pipe_size=None)) == [default, default]


def test_the_server_widens_the_pipes_it_was_given() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVER_SIDE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdin is not None
    assert child.stdout is not None
    try:
        before = fcntl.fcntl(child.stdin.fileno(), fcntl.F_GETPIPE_SZ)
        assert json.loads(child.stdout.readline())["method"] == "notifications/open"
        sizes = [fcntl.fcntl(p.fileno(), fcntl.F_GETPIPE_SZ) for p in (child.stdin, child.stdout)]
        assert before == 64 * 1024
        assert sizes == [DEFAULT_PIPE_SIZE] * 2 or min(sizes) > before  # the user's limit
    finally:
        child.stdin.close()
        assert child.wait(timeout=60) == 0
        child.stdout.close()

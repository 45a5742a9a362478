"""Waiting for a connection to have bytes, cheaply.

An HTTP/1.1 connection that carries one parked request spends its whole life waiting to
read: the server watches for the client leaving, the client waits for the answer. A
task parked in ``SocketStream.receive_some`` keeps seven frames (the stream, the socket
wrapper, its non-blocking helper, the I/O manager ...); one parked in
``trio.lowlevel.wait_readable`` keeps three, about 1 KiB less per connection, and the
read that follows finds its bytes at once (no failed ``recv`` first). The wait is
handed to the caller to await, so it keeps no frame of its own either.
"""

from __future__ import annotations

from collections.abc import Awaitable

import trio

__all__ = ["wait_for_bytes"]


def wait_for_bytes(stream: trio.abc.ReceiveStream) -> Awaitable[None]:
    """Return once ``stream.receive_some`` would not block (bytes, EOF or an error).

    For a :class:`trio.SocketStream` this parks in ``wait_readable``; any other stream
    returns at once and its ``receive_some`` does the waiting. Only the one task that
    reads the stream may call it (as for ``receive_some``). A socket closed meanwhile
    raises :class:`trio.ClosedResourceError`, like ``receive_some`` would.
    """
    if type(stream) is trio.SocketStream:
        return trio.lowlevel.wait_readable(stream.socket)  # noqa: ASYNC105 (awaited by the caller)
    return _at_once()


async def _at_once() -> None:
    """Nothing to wait for (no checkpoint either: ``receive_some`` waits)."""

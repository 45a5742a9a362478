"""Socket reads and writes that need no scheduler round when they cannot block.

A Trio socket operation always ends with a scheduler round (``receive_some`` and
``send_all`` are checkpoints even when the kernel had the bytes or the room at once).
An HTTP/1.1 exchange does one of each per request on each side, and parks right after
anyway (a server waits for the handler, a client for the answer): those rounds are
pure cost. These helpers try the non-blocking system call first, straight on the
socket's descriptor, and tell the caller what is left for Trio's own methods (which
then wait as usual). They are only for plain TCP sockets on POSIX: any other stream
(TLS, a memory stream) gets ``None``/``0`` and goes through its own methods.

The descriptor is read from the socket at every call, never cached: a socket closed
meanwhile reports ``-1``, so a number the kernel has since given to another connection
is never touched. The caller is the stream's one reader (or one writer), as for
``receive_some`` / ``send_all``. :func:`read_now` and :func:`write_now` do not
checkpoint; :func:`receive` and :func:`send` are the streams' methods built on them
(each a cancellation point, a scheduler round only when it has to wait).
"""

from __future__ import annotations

import math
import os

import trio

from ._readable import wait_for_bytes

__all__ = ["read_now", "receive", "send", "write_now"]

_POSIX = os.name == "posix"


def _descriptor(stream: object) -> int:
    if _POSIX and type(stream) is trio.SocketStream:
        return stream.socket.fileno()
    return -1


def read_now(stream: trio.abc.ReceiveStream, size: int) -> bytes | None:
    """The bytes ``stream`` already has (``b""`` at EOF), or ``None`` when a read would
    block or the stream is not a plain socket. Raises :class:`OSError` (a reset, a
    closed socket) as the system call does."""
    fd = _descriptor(stream)
    if fd < 0:
        return None
    try:
        return os.read(fd, size)
    except BlockingIOError:
        return None


def write_now(stream: trio.abc.SendStream, data: bytes) -> int:
    """Write what ``stream``'s socket buffer takes of ``data`` at once; how many bytes
    went (``0`` for a stream that is not a plain socket). Raises :class:`OSError` (a
    reset, a broken pipe, a closed socket) as the system call does."""
    fd = _descriptor(stream)
    if fd < 0:
        return 0
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


async def receive(stream: trio.abc.ReceiveStream, size: int) -> bytes:
    """``stream.receive_some(size)``: bytes already there are taken at once, else the
    task parks until there are some (in ``wait_readable``, see :mod:`._readable`)."""
    await trio.lowlevel.checkpoint_if_cancelled()
    data = read_now(stream, size)
    if data is None:
        await wait_for_bytes(stream)
        data = read_now(stream, size)
        if data is None:  # not a plain socket, or woken without bytes after all
            return bytes(await stream.receive_some(size))
    return data


async def send(stream: trio.abc.SendStream, data: bytes, *, timeout: float = math.inf) -> bool:
    """``stream.send_all(data)``: what the socket takes at once is written without a
    scheduler round or a deadline; the rest must go within ``timeout`` seconds.
    ``False`` when it did not (the stream is then left mid-write: close it)."""
    await trio.lowlevel.checkpoint_if_cancelled()
    sent = write_now(stream, data)
    if sent == len(data):
        return True
    with trio.move_on_after(timeout) as scope:
        await stream.send_all(data[sent:] if sent else data)
    return not scope.cancelled_caught

"""Pipe buffers sized for bursts of lines.

Linux lets a pipe hold up to ``/proc/sys/fs/pipe-max-size`` bytes (1 MiB by default)
instead of 64 KiB. Why it matters: with thousands of calls in flight a stdio peer
writes whole batches of lines, and a 64 KiB pipe takes about four hundred requests per
scheduler pass of the writer; at 10,000 calls in flight that, not the CPU, set the
rate. Both ends of a stdio session ask for :data:`DEFAULT_PIPE_SIZE`: the client for
the pipes it makes for its child, the server for the ones it was given.

Best effort and bounded: the kernel holds the buffer (nothing in Python grows with
it), grows it only as bytes wait in it, and refuses sizes above its limits (an
unprivileged user's total of pipe buffers included); then the pipe keeps its size.
Elsewhere than on Linux, or on a descriptor that is not a pipe, nothing changes.
"""

from __future__ import annotations

import sys

__all__ = ["DEFAULT_PIPE_SIZE", "widen_pipe", "widen_stream"]

#: Bytes of buffer a stdio pipe asks for (Linux's default maximum for a user).
DEFAULT_PIPE_SIZE = 1024 * 1024
_MAX_FCNTL_ARG = 2**31 - 1


def widen_pipe(fd: int, size: int | None = DEFAULT_PIPE_SIZE) -> int | None:
    """Ask for ``size`` bytes of buffer in the pipe behind ``fd``.

    Returns the pipe's size afterwards, or ``None`` when it cannot be told or changed
    (not Linux, not a pipe, ``size`` is ``None``). A size the kernel refuses leaves the
    pipe as it was.
    """
    if size is None or sys.platform != "linux":
        return None
    import fcntl

    try:
        current = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except OSError:
        return None  # not a pipe
    if current >= size or size > _MAX_FCNTL_ARG:
        return current  # a larger value would wrap around in fcntl's C int, not fail
    try:
        return fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
    except OSError:
        return current  # above the system's or the user's limit


def widen_stream(stream: object, size: int | None = DEFAULT_PIPE_SIZE) -> int | None:
    """:func:`widen_pipe` for a Trio stream over a pipe (a child process's stdin or
    stdout: Trio's POSIX pipes have a ``fileno``); ``None`` for any other stream."""
    fileno = getattr(stream, "fileno", None)
    return widen_pipe(fileno(), size) if fileno is not None else None

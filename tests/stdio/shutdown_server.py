"""A child process that serves stdio and shuts itself down gracefully when asked.

Run as ``python tests/stdio/shutdown_server.py``. The tool ``stop`` asks for the
shutdown (as a signal handler of an embedding application would); ``held`` finishes
only once the server has refused request 3, so its answer is one sent during the grace.
Markers go to stderr (``MARK <what>``); stdout belongs to the protocol.
"""

from __future__ import annotations

import sys

import trio

import trimcp
from trimcp.dispatch import CallNext
from trimcp.wire import ErrorResponse, Message

server = trimcp.Server("stdio-shutdown", version="1.0")
stop_asked = trio.Event()
refused = trio.Event()


async def watch(message: Message, call_next: CallNext) -> None:
    await call_next(message)
    if isinstance(message, ErrorResponse) and message.id == 3:
        refused.set()


server.middlewares.server_send.add(watch)


def mark(what: str) -> None:
    sys.stderr.write(f"MARK {what}\n")
    sys.stderr.flush()


@server.tool()
async def held() -> str:
    """Finishes once request 3 was refused."""
    mark("held started")
    await refused.wait()
    return "finished in the grace"


@server.tool()
async def stop() -> str:
    """Asks for a graceful shutdown."""
    stop_asked.set()
    return "stopping"


async def main() -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(trimcp.serve_stdio, server)
        await stop_asked.wait()
        requested = server.shutdown_control.round.requested
        nursery.start_soon(shut_down)
        await requested.wait()
        mark("shutdown requested")
    mark("serve_stdio returned")


async def shut_down() -> None:
    await server.shutdown(grace=30)
    mark("shutdown returned")


if __name__ == "__main__":
    trio.run(main)

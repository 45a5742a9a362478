"""One benchmark MCP server over Streamable HTTP, in its own process.

``python -m benchmarks.http_server KIND [MAX_IN_FLIGHT]`` (``KIND`` is ``trimcp`` or
``sdk``) binds ``127.0.0.1`` on a free port, prints that port as one line on stdout once
it accepts connections, and serves ``http://127.0.0.1:PORT/mcp`` until its stdin
reaches end of file (or it is terminated). Watching stdin means the server never
outlives the process that started it, even if that one dies without cleaning up.

Both servers serve the same one-tool ``echo`` server as the in-memory benchmarks, with
their access logs off (a log line per request would dominate a trivial call):

* ``trimcp``: ``trimcp.serve_http`` (Hypercorn on Trio, h11).
* ``sdk``: ``MCPServer.streamable_http_app`` under uvicorn on asyncio, configured as
  ``MCPServer.run_streamable_http_async`` would (stateful sessions, SSE answers), but
  bound to a socket we opened so the free port is known.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from typing import Any

from benchmarks.core import Workload


def _exit_on_stdin_eof() -> None:
    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _announce(port: int) -> None:
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()


def serve_trimcp(workload: Workload) -> None:
    import trio

    import trimcp
    from benchmarks.impls.trimcp_impl import make_server

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(
                lambda task_status: trimcp.serve_http(
                    make_server(workload), host="127.0.0.1", port=0, task_status=task_status
                )
            )
            _announce(int(port))

    trio.run(main)


def serve_sdk(workload: Workload) -> None:
    import anyio
    import uvicorn

    from benchmarks.impls.sdk_impl import make_server

    app = make_server().streamable_http_app(host="127.0.0.1")
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when
    # the listener's proto says TCP, as it does when uvicorn binds host/port itself.
    # With proto 0, Nagle holds each SSE event behind the headers for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, loop="asyncio")
    server = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[sock]))
            # uvicorn offers a flag, not an event, for "accepting connections".
            while not server.started:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            _announce(port)

    anyio.run(main, backend="asyncio")


SERVERS: dict[str, Any] = {"trimcp": serve_trimcp, "sdk": serve_sdk}


def main(argv: list[str]) -> int:
    kind = argv[0]
    limit = int(argv[1]) if len(argv) > 1 and argv[1] != "-" else None
    _exit_on_stdin_eof()
    SERVERS[kind](Workload(server_max_in_flight=limit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

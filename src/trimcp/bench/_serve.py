"""One benchmark MCP server in a process of its own.

``python -m trimcp.bench._serve KIND TRANSPORT WORKLOAD_JSON`` serves the benchmark
server of ``KIND`` (``trimcp``, ``trimcp-json``, ``trimcp-hypercorn``, ``sdk``,
``sdk-json``, ``floor``, ``floor-hypercorn``) over ``TRANSPORT``:

* ``stdio``: on its own stdin and stdout until stdin closes;
* ``http``: binds ``127.0.0.1`` on a free port, prints that port as one line on stdout
  once it accepts connections, and serves ``http://127.0.0.1:PORT/mcp`` until its
  stdin reaches end of file (or it is terminated), so it never outlives the process
  that started it;
* ``websocket``: the same contract, serving ``ws://127.0.0.1:PORT/mcp`` (trimcp:
  ``serve_websocket``; the floor: :func:`._ws.serve_floor_websocket`; the SDK has none).

A trimcp server keeps its state in the store ``TRIMCP_BENCH_STORE`` names when that
is set (a ``redis://`` URL: a worker of ``trimcp bench --fleet``, :mod:`._fleet`).

Access logs are off everywhere (a log line per request would dominate a trivial call).
The SDK's server runs under uvicorn on asyncio, configured as
``MCPServer.run_streamable_http_async`` would (stateful sessions; SSE answers, or JSON
ones for ``sdk-json``), bound to a socket opened here so the free port is known.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from ._core import Workload
from ._gc import apply_from_env

__all__ = ["main"]

#: Connections an HTTP server accepts beyond the workload's own (handshake, stats).
SPARE_CONNECTIONS = 64


def _exit_on_stdin_eof() -> None:
    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _announce(port: int) -> None:
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()


def _serve_trimcp(kind: str, transport: str, workload: Workload) -> None:
    import trio

    from trimcp.server import serve_http, serve_stdio
    from trimcp.transports.http import HttpServerLimits

    from ._impl_trimcp import make_server

    server = make_server(workload, sse_park=kind != "trimcp-json")
    store = os.environ.get("TRIMCP_BENCH_STORE")
    if store:  # a worker of trimcp bench --fleet: its sessions live in a shared store
        server.use_store(store)
    if transport == "stdio":
        trio.run(serve_stdio, server)
        return
    if transport == "websocket":
        from trimcp.server import serve_websocket

        _serve_announced(partial(serve_websocket, server, host="127.0.0.1", port=0))
        return
    engine: Literal["h11", "hypercorn"] = "hypercorn" if kind == "trimcp-hypercorn" else "h11"
    # A parked call's connection counts until its handler ends, and cancelling it
    # opens another for notifications/cancelled: twice the client's, and spare.
    connections = max(1000, 2 * (workload.connections or 0) + SPARE_CONNECTIONS)
    # One client opens every connection: its per-client budget is the whole table.
    # Its session's queue from POSTs holds the raised in-flight window too (match).
    queue = max(HttpServerLimits().inbound_queue, workload.server_max_in_flight or 0)
    limits = HttpServerLimits(
        max_connections=connections, max_connections_per_client=connections, inbound_queue=queue
    )
    options: dict[str, Any] = {"limits": limits}
    if engine == "hypercorn":
        from ._floor_http import hypercorn_config

        options["hypercorn_config"] = hypercorn_config()  # floor-hypercorn's too

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            serve = partial(serve_http, server, host="127.0.0.1", port=0, engine=engine, **options)
            _announce(int(await nursery.start(serve)))

    trio.run(main)


def _serve_sdk(kind: str, transport: str, workload: Workload) -> None:
    import anyio
    import uvicorn

    from ._impl_sdk import make_server

    server = make_server()
    if transport == "stdio":
        anyio.run(server.run_stdio_async, backend="asyncio")
        return
    if transport != "http":
        raise SystemExit(f"the mcp SDK has no {transport} server")
    app = server.streamable_http_app(host="127.0.0.1", json_response=kind == "sdk-json")
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when
    # the listener's proto says TCP, as it does when uvicorn binds host/port itself.
    # With proto 0, Nagle holds each SSE event behind the headers for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, loop="asyncio", backlog=4096
    )
    uv = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: uv.serve(sockets=[sock]))
            # uvicorn offers a flag, not an event, for "accepting connections".
            while not uv.started:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            _announce(port)

    anyio.run(main, backend="asyncio")


def _serve_floor(kind: str, transport: str, workload: Workload) -> None:
    import trio

    from ._floor import serve_floor_stdio
    from ._floor_http import serve_floor_http, serve_floor_hypercorn
    from ._ws import serve_floor_websocket

    if kind == "floor-hypercorn":
        if transport != "http":
            raise SystemExit(f"floor-hypercorn serves http only, not {transport}")
        _serve_announced(serve_floor_hypercorn)
    elif transport == "stdio":
        trio.run(serve_floor_stdio)
    else:
        _serve_announced(serve_floor_websocket if transport == "websocket" else serve_floor_http)


def _serve_announced(serve: Callable[..., Any]) -> None:
    """Run ``serve`` (a Trio ``nursery.start`` target reporting its port); announce it."""
    import trio

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            _announce(int(await nursery.start(serve)))

    trio.run(main)


SERVERS: dict[str, Callable[[str, str, Workload], Any]] = {
    "trimcp": _serve_trimcp,
    "trimcp-json": _serve_trimcp,
    "trimcp-hypercorn": _serve_trimcp,
    "sdk": _serve_sdk,
    "sdk-json": _serve_sdk,
    "floor": _serve_floor,
    "floor-hypercorn": _serve_floor,
}


def main(argv: list[str]) -> int:
    kind, transport = argv[0], argv[1]
    workload = Workload.from_json(json.loads(argv[2])) if len(argv) > 2 else Workload()
    if transport != "stdio":
        _exit_on_stdin_eof()
    apply_from_env()
    SERVERS[kind](kind, transport, workload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

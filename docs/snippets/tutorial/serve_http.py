"""Serve the to-do server over Streamable HTTP (and WebSocket, on the same endpoint)."""

import sys
from functools import partial

import trio
from server import server

import trimcp


async def main(port: int) -> None:
    async with trio.open_nursery() as nursery:
        serve = partial(trimcp.serve_http, server, host="127.0.0.1", port=port)
        port = await nursery.start(serve)  # returns once it listens: port=0 picks one
        print(f"serving http://127.0.0.1:{port}/mcp", flush=True)


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 8000)

"""One server, every transport: the same call over each."""

import sys
from functools import partial

import trio

import trimcp

server = trimcp.Server("everywhere", version="1.0")


@server.tool()
async def greet(name: str) -> str:
    return f"Hello, {name}!"


async def main() -> None:
    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(trimcp.serve_http, server, port=0))
        ws = await nursery.start(partial(trimcp.serve_websocket, server, port=0))
        transports = [
            server.in_memory(),
            trimcp.stdio_command(sys.executable, "-m", "trimcp", "serve", __file__),
            trimcp.streamable_http(f"http://127.0.0.1:{http}/mcp"),
            trimcp.legacy_sse(f"http://127.0.0.1:{http}/sse"),
            trimcp.websocket(f"ws://127.0.0.1:{ws}/mcp"),
            trimcp.websocket(f"ws://127.0.0.1:{http}/mcp"),  # serve_http's endpoint too
        ]
        for transport in transports:
            async with trimcp.open_client(transport) as client:
                result = await client.call_tool("greet", {"name": "Trio"})
                kind, version = client.transport_kind, client.protocol_version
                print(f"{kind:<16} {version}  {result.content[0].text}")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)

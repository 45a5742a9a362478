"""Two server processes share their sessions through Redis, behind a round-robin balancer.

Here the two "processes" are two Servers in one Trio run (each with a Redis store of its
own: its own process number, lease and relay channel), and the balancer is a few lines
of TCP proxy that hands each new connection to the next server in turn. The client
opens a connection per request (no idle connections kept, no GET stream), so the
requests of its one session land on both servers: the one that did not run
``initialize`` restores the session from Redis (a replica) and serves it.
"""

import contextlib
import itertools
import os
from functools import partial

import trio

import trimcp
from trimcp.transports.http import StreamableHttp

REDIS = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def make_server(name: str) -> trimcp.Server:
    """What each process builds: the same tools, the same store."""
    server = trimcp.Server("fleet", version="1.0", store=REDIS)

    @server.tool()
    async def where(ctx: trimcp.ToolContext) -> list[str]:
        """Which process served the call, in which session, for which client."""
        headers = ctx.headers or {}
        client = ctx.session.client_info
        return [name, headers.get("mcp-session-id", ""), client.name if client else ""]

    return server


async def balance(listeners: list[trio.SocketListener], ports: list[int]) -> None:
    """Round robin per connection, no session affinity (what haproxy's roundrobin does)."""
    turn = itertools.cycle(ports)

    async def relay(client: trio.SocketStream) -> None:
        backend = await trio.open_tcp_stream("127.0.0.1", next(turn))
        async with client, backend, trio.open_nursery() as nursery:

            async def pipe(source: trio.SocketStream, sink: trio.SocketStream) -> None:
                with contextlib.suppress(trio.BrokenResourceError):
                    async for chunk in source:
                        await sink.send_all(chunk)
                nursery.cancel_scope.cancel()  # either side done: the exchange is over

            nursery.start_soon(pipe, client, backend)
            nursery.start_soon(pipe, backend, client)

    await trio.serve_listeners(relay, listeners)


async def main() -> None:
    async with trio.open_nursery() as nursery:
        ports = [
            await nursery.start(partial(trimcp.serve_http, make_server(name), port=0))
            for name in ("process A", "process B")
        ]
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        nursery.start_soon(balance, listeners, ports)
        port = listeners[0].socket.getsockname()[1]
        url = f"http://127.0.0.1:{port}/mcp"
        transport = StreamableHttp(url=url, listen=False, max_idle_connections=0)
        served_by, sessions, clients = set(), set(), set()
        async with trimcp.open_client(transport, name="fleet-demo") as client:
            for _ in range(6):
                result = await client.call_tool("where", {})
                process, session, client_name = result.structured_content["result"]
                served_by.add(process)
                sessions.add(session)
                clients.add(client_name)
        print("6 calls served by:", ", ".join(sorted(served_by)))
        print("in sessions:", len(sessions), "of clients:", ", ".join(clients))
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)

"""One tools/call, seen from each of the four middleware stacks it crosses."""

import trio

import trimcp
from trimcp.wire import Request, Response

server = trimcp.Server("anatomy")


@server.tool()
async def add(a: int, b: int) -> int:
    return a + b


def tap(stack: str) -> trimcp.dispatch.Middleware:
    async def middleware(message, call_next):
        if isinstance(message, Request):
            print(f"{stack:<12} request   id={message.id} {message.method} {message.params}")
        elif isinstance(message, Response):
            print(f"{stack:<12} response  id={message.id} {sorted(message.result)}")
        await call_next(message)

    return middleware


async def main() -> None:
    mine = trimcp.Middlewares()
    transport = server.in_memory()
    async with trimcp.open_client(transport, middlewares=mine, era="handshake") as client:
        # Added while the session runs: every live session recomposes its chains at once.
        mine.client_send.add(tap("client_send"))
        server.middlewares.server_recv.add(tap("server_recv"))
        server.middlewares.server_send.add(tap("server_send"))
        mine.client_recv.add(tap("client_recv"))
        result = await client.call_tool("add", {"a": 2, "b": 3})
        print(f"{'caller':<12} result    {result.structured_content}")


if __name__ == "__main__":
    trio.run(main)

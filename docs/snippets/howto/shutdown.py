"""A graceful shutdown: running requests get their grace, new ones are refused."""

from functools import partial

import trio

import trimcp

server = trimcp.Server("graceful")


@server.tool()
async def work(seconds: float) -> str:
    await trio.sleep(seconds)
    return f"worked {seconds:g} s"


async def call(client: trimcp.Client, seconds: float) -> None:
    try:
        result = await client.call_tool("work", {"seconds": seconds})
        print(result.content[0].text)
    except trimcp.McpError as exc:  # ConnectionClosedError is one too
        print(f"work {seconds:g} s: {type(exc).__name__}")


async def serve(served: trio.Event, *, task_status: trio.TaskStatus[int]) -> None:
    await trimcp.serve_http(server, port=0, task_status=task_status)
    print("serve_http has returned by itself")
    served.set()


async def main() -> None:
    served = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, served))
        url = f"http://127.0.0.1:{port}/mcp"
        transport = trimcp.streamable_http(url)
        async with trimcp.open_client(transport, era="handshake") as client:
            async with trio.open_nursery() as calls:
                await client.list_all_tools()
                calls.start_soon(call, client, 0.5)  # done within the grace
                calls.start_soon(call, client, 60)  # cancelled when the grace is over
                await trio.sleep(0.2)
                await server.shutdown(grace=2.0)
            await served.wait()
            await call(client, 1)  # the server is gone


if __name__ == "__main__":
    trio.run(main)

"""The ready-made middleware on a server, and one of your own."""

import trio

import trimcp
from trimcp.middleware import ErrorMasking, RateLimit, RequestLogging, ResponseCache, Timing
from trimcp.wire import Request

# Stateless-era lists carry ttlMs/cacheScope hints: here, a minute, the same for everyone.
server = trimcp.Server("shop", cache=trimcp.CachePolicy(ttl_ms=60_000, scope="public"))


@server.tool()
async def price(item: str) -> float:
    return 9.5


@server.tool()
async def checkout() -> str:
    raise trimcp.McpError(-32603, "cannot reach payments-7.internal:5432")


timing = Timing()
for middleware in (
    RequestLogging(),  # outermost: sees everything, refused and cached requests included
    timing,
    RateLimit(rate=1, burst=5),  # per session: 5 at once, then 1 per second
    ResponseCache(),
    ErrorMasking(),  # innermost: the logs above keep the real error
):
    middleware.install(server.middlewares)

reached: list[str] = []


async def innermost(message, call_next):
    """A middleware of your own: an async function of (message, call_next)."""
    if isinstance(message, Request):
        reached.append(message.method)
    await call_next(message)


server.middlewares.server_recv.add(innermost)  # added last: innermost of all


async def main() -> None:
    async with trimcp.open_client(server.in_memory()) as client:  # server/discover
        await client.list_all_tools()  # tools/list
        await client.list_all_tools()  # answered by the cache
        print((await client.call_tool("price", {"item": "pen"})).content[0].text)
        for tool in ("checkout", "price"):
            try:
                await client.call_tool(tool, {"item": "ink"} if tool == "price" else {})
            except trimcp.McpError as exc:  # the message, then what data holds
                message = exc.message.partition(";")[0]
                print(f"{tool}: {exc.code} {message}, data: {sorted(exc.data)}")
    print("reached the handlers:", reached)
    stats = timing.stats[("inbound", "tools/call")]
    print(f"tools/call: {stats.count} calls, {stats.errors} errors")


if __name__ == "__main__":
    trio.run(main)

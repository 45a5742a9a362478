"""Bounds are arguments: a handler deadline on the server, a request timeout on the
client, and the HTTP server's own table."""

import trio

import trimcp

server = trimcp.Server(
    "bounded",
    limits=trimcp.SessionLimits(handler_timeout=2.0, max_in_flight=10, max_background=5),
)


@server.tool()
async def slow(seconds: float) -> str:
    await trio.sleep(seconds)
    return f"slept {seconds:g} s"


async def main() -> None:
    client_limits = trimcp.SessionLimits(request_timeout=30.0)
    async with trimcp.open_client(server.in_memory(), limits=client_limits) as client:
        print((await client.call_tool("slow", {"seconds": 1})).content[0].text)
        try:  # the server's handler_timeout cuts the handler short
            await client.call_tool("slow", {"seconds": 60})
        except trimcp.McpError as exc:
            print(f"server deadline: {exc.code} {exc.message}")
        try:  # the caller's own timeout: the server gets notifications/cancelled
            await client.call_tool("slow", {"seconds": 1.5}, timeout=0.5)
        except trimcp.RequestTimeoutError as exc:
            print(f"client timeout: {exc.message}")

    app = trimcp.asgi_app(
        server, limits=trimcp.HttpServerLimits(max_body_size=1 << 20, max_sessions_per_client=8)
    )
    print(f"HTTP: {app.limits.max_body_size} bytes per body, {app.limits.max_sessions} sessions")


if __name__ == "__main__":
    trio.run(main)

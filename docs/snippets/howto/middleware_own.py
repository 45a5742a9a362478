"""A middleware that needs its session: it answers some requests itself."""

import trio

import trimcp
from trimcp.middleware import RoleMiddleware, answer
from trimcp.wire import ErrorObject, Request


class Closed(RoleMiddleware):
    """Refuses calls to the tools named, without running them."""

    def __init__(self, *tools: str) -> None:
        self.tools = set(tools)

    async def received(self, session, message, call_next) -> None:
        if (
            isinstance(message, Request)
            and message.method == "tools/call"
            and (message.params or {}).get("name") in self.tools
        ):
            error = ErrorObject(code=-32000, message="Closed for maintenance")
            await answer(session, message, error=error)  # out through the send stack
            return
        await call_next(message)


server = trimcp.Server("shop")


@server.tool()
async def checkout() -> str:
    return "paid"


Closed("checkout").install(server.middlewares)  # role="server": its two stacks


async def main() -> None:
    async with trimcp.open_client(server.in_memory()) as client:
        try:
            await client.call_tool("checkout")
        except trimcp.McpError as exc:
            print(exc.code, exc.message)


if __name__ == "__main__":
    trio.run(main)

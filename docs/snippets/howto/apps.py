"""A tool with an interactive view (MCP Apps), and what two kinds of client see."""

import random

import trio

import trimcp

HTML = "<!doctype html><title>Dice</title><button id=roll>Roll</button>"

server = trimcp.Server("dice")


@server.app("ui://dice/roller.html", prefers_border=True, csp={"connectDomains": []})
async def roller() -> str:
    return HTML


@server.tool(ui="ui://dice/roller.html")
async def roll(sides: int = 6) -> int:
    """Roll a die."""
    return random.randint(1, sides)


@server.tool(ui="ui://dice/roller.html", visibility=["app"])  # for the view only
async def reset() -> str:
    """Forget the rolls."""
    return "reset"


async def main() -> None:
    async with trimcp.open_client(server.in_memory(), apps=True) as client:  # renders views
        tools = await client.list_all_tools()
        print("app host sees:", [t.name for t in tools])
        print("its model sees:", [t.name for t in client.model_tools(tools)])
        view = await client.read_app_view("roll")
        print(f"view {view.uri}: {len(view.html)} bytes, prefers border: {view.prefers_border}")
    async with trimcp.open_client(server.in_memory()) as client:  # no MCP Apps support
        tools = await client.list_all_tools()
        print("plain client sees:", [t.name for t in tools], [t.meta for t in tools])


if __name__ == "__main__":
    trio.run(main)

"""Call the to-do server: started as a child process over stdio, or at a URL."""

import sys

import trio

import trimcp


async def show_progress(done: float, total: float | None, message: str | None) -> None:
    print(f"  progress {done:g}/{total:g}: {message}")


async def main(target: str) -> None:
    if target.startswith(("http://", "https://")):
        transport = trimcp.streamable_http(target)
    else:
        transport = trimcp.stdio_command(sys.executable, target)
    async with trimcp.open_client(transport) as client:
        print(f"connected to {client.server_info.name} over {client.transport_kind}")
        print(f"revision {client.protocol_version}")
        for tool in await client.list_all_tools():
            print(f"tool {tool.name}: {tool.description}")

        for title in ("Write the docs", "Test the snippets", "Ship it"):
            added = await client.call_tool("add", {"title": title})
            print("added", added.structured_content)
        done = await client.call_tool("finish", {"item_id": 1})
        print(done.content[0].text)
        failed = await client.call_tool("finish", {"item_id": 42})
        print(f"is_error={failed.is_error}: {failed.content[0].text}")

        reviewed = await client.call_tool(
            "review", {"seconds_per_item": 0.01}, on_progress=show_progress
        )
        print(reviewed.content[0].text)
        # Cancelling the scope cancels the call: the server gets notifications/cancelled
        # and the tool stops in its trio.sleep.
        with trio.move_on_after(0.5) as scope:
            await client.call_tool("review", {"seconds_per_item": 60})
        print(f"slow review cancelled: {scope.cancelled_caught}")

        item = await client.read_resource("todo://items/1")
        print(item.contents[0].text)
        prompt = await client.get_prompt("plan_day", {"hours": "4"})
        print(prompt.messages[0].content.text)


if __name__ == "__main__":
    trio.run(main, sys.argv[1] if len(sys.argv) > 1 else "server.py")

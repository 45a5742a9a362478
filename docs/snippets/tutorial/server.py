"""A to-do list served over MCP: the server of the tutorial."""

# --8<-- [start:setup]
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field

import trio

import trimcp
from trimcp.wire import RESOURCE_NOT_FOUND


@dataclass
class Item:
    id: int
    title: str
    done: bool = False


@dataclass
class TodoList:
    items: dict[int, Item] = field(default_factory=dict)

    def add(self, title: str) -> Item:
        item = Item(id=len(self.items) + 1, title=title)
        self.items[item.id] = item
        return item

    def open_items(self) -> list[Item]:
        return [item for item in self.items.values() if not item.done]


@asynccontextmanager
async def lifespan(server: trimcp.Server) -> AsyncIterator[TodoList]:
    # Entered once per serving; a real server would open its database here.
    yield TodoList()


server = trimcp.Server(
    "todo",
    version="1.0",
    instructions="A to-do list: add items, finish them, review what is open.",
    lifespan=lifespan,
)
# --8<-- [end:setup]


# --8<-- [start:tools]
@server.tool()
async def add(ctx: trimcp.ToolContext, title: str) -> Item:
    """Add an item to the list."""
    return ctx.lifespan_state.add(title)


@server.tool()
async def finish(ctx: trimcp.ToolContext, item_id: int) -> str:
    """Mark an item as done."""
    item = ctx.lifespan_state.items.get(item_id)
    if item is None:
        raise trimcp.ToolError(f"there is no item {item_id}")
    item.done = True
    return f"done: {item.title}"


@server.tool()
async def review(ctx: trimcp.ToolContext, seconds_per_item: float = 0.5) -> str:
    """Go through the open items one by one, reporting progress."""
    items = ctx.lifespan_state.open_items()
    for number, item in enumerate(items, 1):
        await trio.sleep(seconds_per_item)  # the real work; a cancelled call stops here
        await ctx.report_progress(number, len(items), item.title)
    return f"reviewed {len(items)} items"


# --8<-- [end:tools]


# --8<-- [start:resources]
@server.resource("todo://items", name="items", mime_type="application/json")
async def all_items(ctx: trimcp.ToolContext) -> str:
    """Every item, as JSON."""
    return json.dumps([asdict(item) for item in ctx.lifespan_state.items.values()])


@server.resource_template("todo://items/{item_id}", name="item", mime_type="text/plain")
async def one_item(ctx: trimcp.ToolContext, item_id: int) -> str:
    """One item, as a line of text."""
    item = ctx.lifespan_state.items.get(item_id)
    if item is None:
        uri = f"todo://items/{item_id}"
        raise trimcp.McpError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})
    return f"[{'x' if item.done else ' '}] {item.title}"


# --8<-- [end:resources]


# --8<-- [start:prompts]
@server.prompt()
async def plan_day(ctx: trimcp.ToolContext, hours: int = 8) -> str:
    """Plan a day around the open items."""
    titles = "\n".join(f"- {item.title}" for item in ctx.lifespan_state.open_items())
    return f"I have {hours} hours today. Plan them around these open items:\n{titles}"


# --8<-- [end:prompts]


# --8<-- [start:main]
if __name__ == "__main__":
    trio.run(trimcp.serve_stdio, server)
# --8<-- [end:main]

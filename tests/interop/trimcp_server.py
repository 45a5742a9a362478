"""The trimcp server the official SDK's stdio client talks to in the interop tests.

``was_cancelled`` says whether a ``hang`` handler saw its cancellation, so a client can
check over the protocol that cancelling reached the tool.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from typing import Annotated

import attrs
import pydantic
import trio

import trimcp

server = trimcp.Server("trimcp-interop", version="1.0")

_cancelled: dict[str, trio.Event] = {}


def _cancellation(label: str) -> trio.Event:
    return _cancelled.setdefault(label, trio.Event())


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(ctx: trimcp.ToolContext, steps: int) -> str:
    """Report ``steps`` progress notifications."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.tool()
async def hang(ctx: trimcp.ToolContext, label: str) -> str:
    """Report progress once, then block until cancelled; remember the cancellation."""
    try:
        await ctx.report_progress(0, message="started")
        await trio.sleep_forever()
    except trio.Cancelled:
        _cancellation(label).set()
        raise
    return "unreachable"


@server.tool()
async def was_cancelled(label: str, within: float = 5.0) -> bool:
    """Whether the ``hang`` call ``label`` is (or within ``within`` s becomes) cancelled."""
    with trio.move_on_after(within):
        await _cancellation(label).wait()
    return _cancellation(label).is_set()


@server.tool()
async def summarize(ctx: trimcp.ToolContext, text: str) -> str:
    """Sampling: ask the client's model."""
    result = await ctx.sample(text, max_tokens=30, system_prompt="be brief")
    content = result.content
    assert isinstance(content, trimcp.TextContent)
    return f"{result.model}/{result.role}: {content.text}"


@attrs.frozen
class Person:
    name: str
    age: int


@server.tool()
async def register(ctx: trimcp.ToolContext) -> str:
    """Elicitation: ask the user for a typed answer."""
    answer, person = await ctx.elicit("Who are you?", Person)
    if person is None:
        return f"no answer ({answer.action})"
    return f"{person.name} is {person.age}"


@server.tool()
async def log_something(ctx: trimcp.ToolContext, text: str) -> str:
    """Send a log message to the client, then answer."""
    await ctx.log("warning", {"said": text}, logger="interop")
    return "logged"


@server.tool()
async def ask_forever(ctx: trimcp.ToolContext) -> str:
    """Elicit, for an answer that never comes unless the client gives one."""
    answer, _ = await ctx.elicit("Waiting...", {"type": "object", "properties": {}})
    return answer.action


# -- tools written as Python users write them: Python names, common types, plain def ----


@dataclasses.dataclass
class Item:
    """Something to create.

    Attributes:
        name: what it is called.
        quantity: how many.
    """

    name: str
    quantity: int = 1


class Owner(pydantic.BaseModel):
    email: str
    since: datetime.date


@dataclasses.dataclass
class Created:
    item: Item
    max_results: int
    due: datetime.date | None
    owner: Owner | None
    ref: uuid.UUID


@server.tool()
def create_item(
    item: Item,
    max_results: Annotated[int, pydantic.Field(ge=0, description="At most this many")] = 10,
    due: datetime.date | None = None,
    owner: Owner | None = None,
) -> Created:
    """Create an item (a plain def: it runs in a worker thread)."""
    return Created(item, max_results, due, owner, uuid.UUID(int=max_results))


@server.prompt()
def plan(days: int, start: datetime.date) -> str:
    """A prompt with typed arguments, read from the strings the protocol carries."""
    return f"{days} days from {start:%A %d %B %Y}"

"""An MCP App: a dice roller whose tool comes with an interactive view.

Serve it with ``trimcp serve examples/apps/server.py`` (stdio) or ``... --http
127.0.0.1:8000``. A host that renders MCP Apps (it declares ``io.modelcontextprotocol/ui``)
sees ``roll`` with ``_meta.ui.resourceUri = "ui://dice/roller.html"``, reads that view
and shows it in a sandboxed frame, which then receives the tool's result and may call
``roll`` again, or ``history`` (visible to the view only). Any other client sees
``roll`` as a plain tool whose text result says everything, and no ``history``.
"""

from __future__ import annotations

import random
from pathlib import Path

import attrs

import trimcp

VIEW = "ui://dice/roller.html"
HTML = Path(__file__).with_name("roller.html")

server = trimcp.Server("dice", version="1.0", title="Dice roller")
ROLLS: list[list[int]] = []
MAX_HISTORY = 20


@attrs.frozen
class Roll:
    sides: int
    rolls: list[int]
    total: int


@server.app(VIEW, name="Dice roller", prefers_border=True)
async def roller() -> str:
    """The dice roller's view: the dice of the last roll and a button to roll again."""
    return HTML.read_text(encoding="utf-8")


@server.tool(ui=VIEW)
async def roll(sides: int = 6, count: int = 2) -> Roll:
    """Roll ``count`` dice with ``sides`` sides each."""
    if not 2 <= sides <= 100 or not 1 <= count <= 10:
        raise trimcp.ToolError("sides must be 2..100 and count 1..10")
    rolls = [random.randint(1, sides) for _ in range(count)]
    ROLLS.append(rolls)
    del ROLLS[:-MAX_HISTORY]
    return Roll(sides=sides, rolls=rolls, total=sum(rolls))


@server.tool(ui=VIEW, visibility=["app"])
async def history() -> list[list[int]]:
    """The last rolls (for the view; the model never sees this tool)."""
    return list(ROLLS)

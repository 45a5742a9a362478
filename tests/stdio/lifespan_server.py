"""A stdio server with a lifespan: it says on stderr when the lifespan enters and exits,
and its tool answers with the lifespan's state."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trimcp


@asynccontextmanager
async def lifespan(server: trimcp.Server) -> AsyncIterator[dict[str, Any]]:
    print("LIFESPAN enter", file=sys.stderr, flush=True)
    try:
        yield {"database": f"db of {server.info.name}"}
    finally:
        print("LIFESPAN exit", file=sys.stderr, flush=True)


server = trimcp.Server("lifespan-fixture", lifespan=lifespan)


@server.tool()
async def database(ctx: trimcp.ToolContext) -> str:
    """Name the database the lifespan opened."""
    return str(ctx.lifespan_state["database"])

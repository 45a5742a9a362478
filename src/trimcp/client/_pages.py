"""Following ``nextCursor``: how every ``list_all_*`` of the client walks a listing.

Pages are asked for one after the other, each with the cursor the previous one gave,
until a page has no ``nextCursor``. A server whose cursors loop is caught two ways: a
page that hands back the cursor it was asked with ends the walk (what it listed is
kept), and a walk longer than :data:`MAX_PAGES` pages fails with ``-32602``, naming the
method, rather than running forever.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Final, Protocol, TypeVar

from trimcp.dispatch import McpError
from trimcp.wire import INVALID_PARAMS

__all__ = ["MAX_PAGES", "Page", "all_pages"]

MAX_PAGES: Final = 10_000
"""Pages one ``list_all_*`` follows before deciding the server's cursors loop."""


class Page(Protocol):
    """One page of a listing: whatever it lists, and the cursor of the next page."""

    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=Page)
T = TypeVar("T")


async def all_pages(
    method: str,
    page: Callable[[str | None], Awaitable[P]],
    items: Callable[[P], Iterable[T]],
) -> list[T]:
    """The ``items`` of every page ``page(cursor)`` gives, from the first (module doc)."""
    found: list[T] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        current = await page(cursor)
        found.extend(items(current))
        if not current.next_cursor or current.next_cursor == cursor:
            return found
        cursor = current.next_cursor
    raise McpError(INVALID_PARAMS, f"{method} returned more than {MAX_PAGES} pages")

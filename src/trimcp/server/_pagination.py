"""Opaque, validated list cursors shared by every paginated list.

A cursor encodes the offset of the next page together with the list it belongs to, so
a cursor from ``tools/list`` cannot be replayed against another list. Cursors are
opaque to clients (the spec forbids them from parsing them); a malformed one is
``-32602 Invalid params``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, TypeVar

from trimcp.dispatch import McpError
from trimcp.wire import INVALID_PARAMS

__all__ = ["DEFAULT_PAGE_SIZE", "page_result", "paginate"]

#: Items per page of every list a server answers.
DEFAULT_PAGE_SIZE = 100

T = TypeVar("T")


def _encode(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def _decode(kind: str, cursor: object) -> int:
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise McpError(INVALID_PARAMS, "Invalid params: invalid cursor")
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        raise McpError(INVALID_PARAMS, "Invalid params: invalid cursor") from None
    prefix, _, number = text.partition(":")
    if prefix != kind or not number.isdigit():
        raise McpError(INVALID_PARAMS, "Invalid params: invalid cursor")
    return int(number)


def paginate(
    kind: str, items: Sequence[T], cursor: object, page_size: int = DEFAULT_PAGE_SIZE
) -> tuple[Sequence[T], str | None]:
    """Return the page starting at ``cursor`` (``None``: the first) and the next cursor."""
    start = 0 if cursor is None else _decode(kind, cursor)
    end = start + page_size
    page = items[start:end]
    return page, (_encode(kind, end) if end < len(items) else None)


def page_result(key: str, items: list[Any], next_cursor: str | None) -> dict[str, Any]:
    """A list result: ``{key: items}``, with ``nextCursor`` when there is a next page."""
    result: dict[str, Any] = {key: items}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result

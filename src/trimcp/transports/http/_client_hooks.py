"""The headers hook of the HTTP client: what it is told, and what it returns."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Final, final

import attrs

from trimcp.wire import Message

__all__ = ["HeadersHook", "HttpRequestInfo", "extra_headers"]

_RESERVED: Final = {
    "host",
    "content-type",
    "content-length",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "transfer-encoding",
    "connection",
}


@final
@attrs.frozen
class HttpRequestInfo:
    """What the headers hook is told about the HTTP request it adds headers to."""

    method: str
    """``POST``, ``GET`` (the listening or a resuming stream) or ``DELETE``."""
    url: str
    message: Message | None
    """The message a POST carries; ``None`` for GET and DELETE."""


HeadersHook = Callable[[HttpRequestInfo], Mapping[str, str] | Awaitable[Mapping[str, str]]]
"""Called before every HTTP request; returns extra headers (sync or async)."""


async def extra_headers(
    extra: Mapping[str, str] | HeadersHook | None, info: HttpRequestInfo
) -> list[tuple[str, str]]:
    """The configured extra headers for one request, minus the names the transport sets."""
    if callable(extra):
        got = extra(info)
        extra = await got if inspect.isawaitable(got) else got
    if not extra:
        return []
    assert not callable(extra)
    return [(k, v) for k, v in extra.items() if k.lower() not in _RESERVED]

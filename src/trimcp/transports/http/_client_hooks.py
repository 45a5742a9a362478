"""The headers hook of the HTTP client: what it is told, and what it returns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import final

import attrs

from trimcp.wire import Message

__all__ = ["HeadersHook", "HttpRequestInfo"]


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

"""Which transport a channel is: what ``Client.transport_kind`` reports.

The HTTP client channel answers ``"http+sse"`` once it speaks the 2024-11-05 HTTP+SSE
transport (``legacy_sse("always")``, or the fallback when a server refused the first
``initialize`` POST the way such servers do) and ``"streamable-http"`` otherwise. On
the server side, a Streamable HTTP session is ``"streamable-http"`` and an HTTP+SSE one
``"http+sse"``. Newline-delimited JSON over a byte stream is the stdio transport's
framing, so a :class:`StreamChannel` is ``"stdio"`` whatever stream carries it.
"""

from __future__ import annotations

from typing import Literal

from trimcp.nursery import MessageChannel

from ._memory import MemoryChannel
from ._stream import StreamChannel
from .http import HttpClientChannel, HttpSessionChannel, LegacySseChannel
from .websocket import WebSocketChannel

__all__ = ["TransportKind", "transport_kind"]

TransportKind = Literal["streamable-http", "http+sse", "stdio", "websocket", "memory"]

_KINDS: tuple[tuple[type, TransportKind], ...] = (
    (HttpSessionChannel, "streamable-http"),
    (LegacySseChannel, "http+sse"),
    (StreamChannel, "stdio"),
    (WebSocketChannel, "websocket"),
    (MemoryChannel, "memory"),
)


def transport_kind(channel: MessageChannel) -> TransportKind | None:
    """The transport ``channel`` speaks (``None``: a channel of another kind, such as
    one written for a custom transport)."""
    if isinstance(channel, HttpClientChannel):
        return "http+sse" if channel.legacy.active else "streamable-http"
    for cls, kind in _KINDS:
        if isinstance(channel, cls):
            return kind
    return None

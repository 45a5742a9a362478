"""Trio I/O around the wire layer: memory pairs, byte streams and stdio."""

from ._base import ClientTransport as ClientTransport
from ._kind import TransportKind as TransportKind
from ._kind import transport_kind as transport_kind
from ._memory import DEFAULT_MEMORY_BUFFER as DEFAULT_MEMORY_BUFFER
from ._memory import MemoryChannel as MemoryChannel
from ._memory import memory_channel_pair as memory_channel_pair
from ._pipes import DEFAULT_PIPE_SIZE as DEFAULT_PIPE_SIZE
from ._pipes import widen_pipe as widen_pipe
from ._pipes import widen_stream as widen_stream
from ._stdio import StdioCommand as StdioCommand
from ._stdio import open_stdio_channel as open_stdio_channel
from ._stdio import stdio_command as stdio_command
from ._stream import DEFAULT_RECEIVE_SIZE as DEFAULT_RECEIVE_SIZE
from ._stream import StreamChannel as StreamChannel
from .http import StreamableHttp as StreamableHttp
from .http import legacy_sse as legacy_sse
from .http import streamable_http as streamable_http
from .websocket import WebSocketLimits as WebSocketLimits
from .websocket import WebSocketTransport as WebSocketTransport
from .websocket import websocket as websocket

__all__ = [
    "DEFAULT_MEMORY_BUFFER",
    "DEFAULT_PIPE_SIZE",
    "DEFAULT_RECEIVE_SIZE",
    "ClientTransport",
    "MemoryChannel",
    "StdioCommand",
    "StreamChannel",
    "StreamableHttp",
    "TransportKind",
    "WebSocketLimits",
    "WebSocketTransport",
    "legacy_sse",
    "memory_channel_pair",
    "open_stdio_channel",
    "stdio_command",
    "streamable_http",
    "transport_kind",
    "websocket",
    "widen_pipe",
    "widen_stream",
]

"""MCP over WebSocket (wsproto): one JSON-RPC message per text message, subprotocol ``mcp``.

The client is :func:`websocket`; servers are the lean ``trimcp.serve_websocket`` and,
for mounting, the Streamable HTTP ASGI app, which also serves WebSocket connections on
its endpoint path under any ASGI server (hypercorn included).
"""

from ._accept import accept_websocket as accept_websocket
from ._accept import accept_with_caller as accept_with_caller
from ._asgi import AsgiMessages as AsgiMessages
from ._asgi import serve_asgi_websocket as serve_asgi_websocket
from ._channel import WebSocketChannel as WebSocketChannel
from ._channel import serve_until_expiry as serve_until_expiry
from ._client import WebSocketHandshakeError as WebSocketHandshakeError
from ._client import WebSocketTransport as WebSocketTransport
from ._client import websocket as websocket
from ._frames import MessageIO as MessageIO
from ._frames import MessageTooBig as MessageTooBig
from ._frames import WsprotoMessages as WsprotoMessages
from ._framing import FrameReader as FrameReader
from ._framing import MaskingKeys as MaskingKeys
from ._framing import at_frame_boundary as at_frame_boundary
from ._framing import text_frame as text_frame
from ._limits import SUBPROTOCOL as SUBPROTOCOL
from ._limits import WebSocketLimits as WebSocketLimits

__all__ = [
    "SUBPROTOCOL",
    "AsgiMessages",
    "FrameReader",
    "MaskingKeys",
    "MessageIO",
    "MessageTooBig",
    "WebSocketChannel",
    "WebSocketHandshakeError",
    "WebSocketLimits",
    "WebSocketTransport",
    "WsprotoMessages",
    "accept_websocket",
    "accept_with_caller",
    "at_frame_boundary",
    "serve_asgi_websocket",
    "serve_until_expiry",
    "text_frame",
    "websocket",
]

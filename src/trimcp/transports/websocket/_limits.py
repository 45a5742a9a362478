"""The bounds of the WebSocket transport, with their defaults."""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["SUBPROTOCOL", "WebSocketLimits"]

SUBPROTOCOL: Final = "mcp"
"""The WebSocket subprotocol both ends name in the handshake (``Sec-WebSocket-Protocol``)."""


@attrs.frozen
class WebSocketLimits:
    """Every bound of a WebSocket endpoint or client (all have defaults).

    Attributes:
      max_message: bytes in one message, all its frames together (default 4 MiB, as a
        Streamable HTTP body). A larger one closes the connection with 1009.
      receive_size: bytes asked of the socket per read (default 64 KiB).
      read_ahead: bytes of messages read ahead while the session takes none (default
        1 MiB), so that pings and pongs queued behind them are seen; past it reading
        stops until the session takes some (backpressure), and the keep-alive does not
        count that time against the peer.
      max_connections: connections the lean server (``serve_websocket``) serves at
        once (default 1000); further clients wait in the listen backlog.
      handshake_timeout: seconds the opening handshake may take, on either side
        (default 10); a slower one is refused (408) or fails.
      max_header_bytes: bytes of the handshake's request line and headers (default
        16 KiB); more is refused with 431.
      close_timeout: seconds the closing handshake may take before the socket is simply
        closed (default 2).
      send_timeout: seconds one socket write may take (default 30, as over stdio and
        HTTP); a peer that reads nothing for that long breaks the connection (and ends
        its session), instead of holding every sender and the keep-alive's ping.
      ping_interval: seconds between keep-alive pings from the trimcp client and the
        lean server (default 20; ``None``: no pings). They keep idle connections alive
        through proxies and find peers that vanished without a close.
      ping_timeout: seconds a ping may wait for an answer (default 20), counting only
        time spent listening on an empty socket; any bytes from the peer answer it. Past
        it the connection is dropped and its session ends.
    """

    max_message: int = 4 * 1024 * 1024
    receive_size: int = 64 * 1024
    read_ahead: int = 1024 * 1024
    max_connections: int = 1000
    handshake_timeout: float = 10.0
    max_header_bytes: int = 16 * 1024
    close_timeout: float = 2.0
    send_timeout: float = 30.0
    ping_interval: float | None = 20.0
    ping_timeout: float = 20.0

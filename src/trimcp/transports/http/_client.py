"""The Streamable HTTP client transport: ``trimcp.streamable_http(url, ...)``.

A :class:`StreamableHttp` is a :class:`~trimcp.transports.ClientTransport`: pass it to
``trimcp.open_client``. Its ``connect()`` block runs an :class:`HttpClientChannel` (see
``_client_channel`` for the message flow) over a keep-alive :class:`ConnectionPool`
built on h11 and Trio streams (TLS through :class:`trio.SSLStream` for ``https``).

Leaving the block cancels every stream the channel still reads, then sends ``DELETE``
for the session (when the server issued one) under its own shielded deadline
(``close_timeout``, 2 s), so a server that black-holes the DELETE cannot hang the close.

Every bound has a default, documented on the attribute below.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any, Literal, final

import attrs
import trio

from trimcp.nursery import unwrap_single

from ._client_auth import HttpAuth
from ._client_channel import HttpClientChannel
from ._client_conn import ConnectionPool, parse_url
from ._client_hooks import HeadersHook, HttpRequestInfo

__all__ = ["HeadersHook", "HttpRequestInfo", "StreamableHttp", "legacy_sse", "streamable_http"]


@final
@attrs.frozen(kw_only=True)
class StreamableHttp:
    """A Streamable HTTP server endpoint to connect to, and how to talk to it."""

    url: str
    headers: Mapping[str, str] | HeadersHook | None = None
    """Extra headers: a mapping, or a hook evaluated per request. Names the transport
    sets itself (Host, Content-Type, Content-Length, Accept, Mcp-Session-Id,
    MCP-Protocol-Version, Last-Event-ID) are not overridden."""
    ssl_context: ssl.SSLContext | None = None
    """For ``https``; default ``ssl.create_default_context()``."""
    listen: bool = True
    """Open the standalone GET stream after initialization (handshake-era revisions)."""
    max_connections: int = 32
    """Live connections at once. Each SSE response holds one for its duration; a send
    waits while all are busy."""
    max_idle_connections: int | None = None
    """Keep-alive connections kept for reuse; ``None`` (default): as many as
    ``max_connections``. Each is closed once idle for ``idle_timeout``. Fewer means a
    client whose load ebbs for a moment closes connections it opens again an instant
    later (a connect and an accept on both sides per reopening)."""
    max_connecting: int = 16
    """Connections being opened at once. Past it, a send waits for a connection given
    back or an opening slot, whichever comes first: a burst of sends (a thousand calls
    started or cancelled at once) opens its connections a few at a time, never floods
    the server's accept backlog, and reuses those that come back meanwhile."""
    idle_timeout: float = 4.0
    """Seconds an idle connection stays eligible for reuse (servers drop them after ~5 s)."""
    connect_timeout: float = 10.0
    """Seconds to open a connection (TCP and TLS)."""
    max_header_size: int = 16 * 1024
    """Largest response head accepted, in bytes."""
    max_message_size: int = 10 * 1024 * 1024
    """Largest JSON body or SSE event accepted, in bytes."""
    max_queued: int = 1024
    """Received messages buffered before readers wait (backpressure on the streams)."""
    reconnect_delay: float = 1.0
    """Seconds before reconnecting an SSE stream when the server sent no ``retry``."""
    max_reconnect_delay: float = 30.0
    """Cap of the exponential backoff between reconnections without progress."""
    max_reconnects: int = 3
    """SSE GET attempts in a row that bring no new event id before giving up (a resumed
    POST stream then fails its request; the standalone GET stream just stops)."""
    stream_linger: float = 1.0
    """Seconds a POST stream is read after its response, waiting for the server to end it
    (so the connection can be reused) before it is dropped."""
    close_timeout: float = 2.0
    """Deadline of the ``DELETE`` that ends the session on close."""
    reinitialize: bool = True
    """On 404 for the session, start a new one transparently (MCP spec, session
    management): re-send the session's ``initialize``, then the request that got the 404
    (once); calls in flight on the old session fail with an :class:`~trimcp.McpError`
    saying it expired. ``False``: a 404 ends the channel (see ``_client_reinit``)."""
    max_reinitializations: int = 3
    """New sessions started per minute at most; past that a 404 ends the channel."""
    auth: HttpAuth | None = None
    """The authorization layer (``trimcp.auth.OAuth``, or any :class:`HttpAuth`): it adds
    credentials to every request and answers ``401``/``403`` challenges; caller-supplied
    ``Authorization``/``DPoP`` headers are then dropped (see ``_client_auth``)."""
    max_auth_retries: int = 4
    """Times one request is re-sent after authorization challenges, at most."""
    legacy_sse: Literal["fallback", "always", "never"] = "fallback"
    """The 2024-11-05 HTTP+SSE transport (``_client_legacy``): ``"fallback"`` tries it
    when the first ``initialize`` POST is answered 400, 404 or 405 (the spec's
    backwards-compatibility procedure); ``"always"`` speaks only it; ``"never"``."""

    def __attrs_post_init__(self) -> None:
        parse_url(self.url)  # fail early on a bad URL
        if self.legacy_sse not in ("fallback", "always", "never"):
            raise ValueError(f"legacy_sse must be fallback, always or never: {self.legacy_sse!r}")
        if self.max_connections < 1 or self.max_queued < 1 or self.max_connecting < 1:
            raise ValueError("max_connections, max_connecting and max_queued must be at least 1")
        if self.max_auth_retries < 0:
            raise ValueError("max_auth_retries must be at least 0")

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[HttpClientChannel]:
        """Open the channel for the ``async with`` block (see the module doc)."""
        pool = ConnectionPool(
            parse_url(self.url),
            ssl_context=self.ssl_context,
            max_connections=self.max_connections,
            max_idle=(
                self.max_connections
                if self.max_idle_connections is None
                else self.max_idle_connections
            ),
            max_connecting=self.max_connecting,
            idle_timeout=self.idle_timeout,
            connect_timeout=self.connect_timeout,
            max_header_size=self.max_header_size,
        )
        with unwrap_single():
            async with (
                nullcontext(None) if self.auth is None else self.auth.attach(self.url)
            ) as auth:
                channel = HttpClientChannel(self, pool, auth)
                try:
                    async with trio.open_nursery() as nursery:
                        await nursery.start(channel._run)
                        try:
                            yield channel
                        finally:
                            channel._stop()
                finally:
                    with trio.CancelScope(shield=True):
                        with trio.move_on_after(self.close_timeout):
                            await channel._terminate()
                        await pool.aclose()


def streamable_http(
    url: str,
    *,
    headers: Mapping[str, str] | HeadersHook | None = None,
    ssl_context: ssl.SSLContext | None = None,
    listen: bool = True,
    max_connections: int = 32,
    max_message_size: int = 10 * 1024 * 1024,
    max_reconnects: int = 3,
    close_timeout: float = 2.0,
    reinitialize: bool = True,
    auth: HttpAuth | None = None,
    legacy_sse: Literal["fallback", "always", "never"] = "fallback",
) -> StreamableHttp:
    """Describe a Streamable HTTP server at ``url``; pass it to ``open_client``.

    A server that answers the first ``initialize`` with 400, 404 or 405 is tried as a
    2024-11-05 HTTP+SSE server (GET ``url`` for its ``endpoint`` event), unless
    ``legacy_sse="never"``.

    More options are on :class:`StreamableHttp`. A 404 on the session starts a new one
    transparently (at most ``max_reinitializations``, 3, per minute): the request that got
    it is re-sent once, and calls in flight on the old session fail with an
    :class:`~trimcp.McpError` saying it expired. With ``reinitialize=False``, or past the
    bound, a 404 ends the channel (every waiting call fails with
    :class:`~trimcp.ConnectionClosedError`); to go on, open a new client.

    ``auth`` (``trimcp.auth.OAuth(...)``) authorizes the client with the server's
    authorization server when the server asks for it (MCP authorization, OAuth 2.1).
    """
    return StreamableHttp(
        url=url,
        headers=headers,
        ssl_context=ssl_context,
        listen=listen,
        max_connections=max_connections,
        max_message_size=max_message_size,
        max_reconnects=max_reconnects,
        close_timeout=close_timeout,
        reinitialize=reinitialize,
        auth=auth,
        legacy_sse=legacy_sse,
    )


def legacy_sse(url: str, **options: Any) -> StreamableHttp:
    """Describe a 2024-11-05 HTTP+SSE server whose SSE endpoint is ``url`` (``.../sse``):
    the client GETs it for the ``endpoint`` event and never tries Streamable HTTP.
    ``options`` are those of :class:`StreamableHttp`."""
    return StreamableHttp(url=url, **{"listen": False, **options, "legacy_sse": "always"})

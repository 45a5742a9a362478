"""The bounds of the Streamable HTTP server, each with its documented default.

Every buffer, queue and table the server keeps is bounded (design invariant 7). A bound
that is reached gives a defined HTTP error or closes one stream; it never lets memory
grow without limit.
"""

from __future__ import annotations

from typing import Any, final

import attrs

__all__ = ["HttpServerLimits"]


def _positive(_inst: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


def _fraction(_inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not 0 < value < 1:
        raise ValueError(f"{attribute.name} must be between 0 and 1, got {value!r}")


@final
@attrs.frozen(kw_only=True)
class HttpServerLimits:
    """Bounds and timeouts of the Streamable HTTP server.

    Attributes:
      max_body_size: bytes of one POST body (default 4 MiB). A larger declared
        ``Content-Length`` is refused before reading; a body that grows past it while
        being read is refused then. Both get 413 and the connection is closed.
      body_timeout: seconds the whole body may take to arrive (default 30). Slower
        bodies get 408 and the connection is closed (hypercorn has no read timeout).
      max_header_bytes: bytes of all header names and values together (default
        16 KiB); more gets 431.
      max_sessions: live sessions at once (default 1024). Beyond it ``initialize`` gets
        503 with ``Retry-After``, unless a session still in its handshake can give way
        (the oldest, of the client holding the most).
      max_sessions_per_client: live sessions one client may hold (default 64): one
        address (an IPv6 /64), or one authenticated caller when the app has an
        authorization layer (``auth=``). Beyond it that client's ``initialize`` gets 429 with
        ``Retry-After``; other clients are not affected.
      stateless_pool: idle sessions kept for stateless-era POSTs (default 32): a POST
        of that era is served by one of them and gives it back once answered, instead
        of building and ending a session of its own; 0 keeps none. They count towards
        ``max_sessions``, and give way first when the table is full.
      handshake_timeout: seconds a session opened by ``initialize`` may go without
        ``notifications/initialized`` (default 10); then it ends (later requests get
        404).
      retry_after: the ``Retry-After`` seconds of that 503 (default 5).
      session_idle_timeout: seconds a session may go without any HTTP request or open
        stream before it is terminated (default 1800).
      inbound_queue: messages queued from POSTs towards one session (default 128: a
        whole in-flight window of the session's default ``max_in_flight``, 100, and
        room for its notifications, so a client within that window never waits here);
        a POST waits for room (backpressure) ...
      inbound_wait: ... for at most this many seconds (default 10), then gets 503 with
        ``Retry-After`` (a session whose in-flight limit is reached stops reading).
      stream_queue_events / stream_queue_bytes: events and bytes waiting to be written
        to one SSE response (defaults 256 and 4 MiB). A stream that exceeds either is
        closed; its events stay in the event store for resumption.
      send_timeout: seconds one write to a client may take (default 30); a slower
        write closes that stream.
      replay_events / replay_bytes: events and bytes the in-memory event store keeps
        per stream (defaults 1000 and 4 MiB); the oldest go first.
      replay_streams: streams the in-memory event store keeps per session (default
        64); the oldest stream goes first.
      replay_session_bytes / replay_total_bytes: bytes of events the in-memory event
        store keeps per session (default 16 MiB) and for all sessions together (default
        256 MiB). Past the first the session's oldest events go; past the second the
        oldest events of the session holding the most. A client resuming from before
        an evicted event gets 410.
      output_session_bytes / output_total_bytes: bytes queued or being written to the
        responses of one session (default 32 MiB) and of all sessions together
        (default 256 MiB): SSE events, JSON answers, HTTP+SSE streams. An SSE event that
        does not fit closes its stream (as an overflow does; the client resumes from the
        event store); a JSON answer that does not fit is replaced by a ``-32000`` error
        for its request; an HTTP+SSE stream that does not fit ends its session. When
        the server's budget is full, the largest stream of the session holding the most
        is closed first (if that session holds at least as much as the one asking).
      sse_retry_ms: the ``retry`` field of every priming event (default 1000).
      max_dropped: nothing is kept of dropped messages but a count; this only caps the
        debug logging of them per session (default 100 log lines).

    Bounds of the connections themselves, kept by the ``h11`` engine of ``serve_http``
    (hypercorn keeps its own):

      max_connections: connections served at once (default 1000). At the cap, a new
        connection takes the place of one still waiting for a request head (the oldest
        of the client with the most of them; 408 if its head had begun), or waits in
        the listen backlog until one ends.
      keep_alive_timeout: seconds a connection may sit idle between requests, or
        before its first (default 5), then it is closed.
      header_timeout: seconds a request line and headers may take once their first
        byte arrived (default 10); slower heads get 408 and the connection is closed.
        ``max_header_bytes`` bounds the raw request line and headers together too
        (431).
      pressure: the share of ``max_connections`` in use from which the server is under
        pressure (default 0.5). Then ``keep_alive_timeout`` and ``header_timeout``
        shrink in proportion to the load, down to ``pressure_timeout`` (default 1 s)
        at the cap, and ...
      max_connections_per_client: ... a client (an address, an IPv6 /64) holding this
        many connections (default 250) has further ones turned away with 503 and
        ``Retry-After``. Below ``pressure`` nothing is refused.
      inbound_client_bytes / inbound_total_bytes: bytes of request bodies being
        received at once from one client (an address, an IPv6 /64, or an
        authenticated caller; default 16 MiB) and from all clients (default 64 MiB).
        A body that does not fit gets 503 with ``Retry-After: 1`` and its connection
        is closed (:mod:`._inbound`).
    """

    max_body_size: int = attrs.field(default=4 * 1024 * 1024, validator=_positive)
    body_timeout: float = attrs.field(default=30.0, validator=_positive)
    max_header_bytes: int = attrs.field(default=16 * 1024, validator=_positive)
    max_sessions: int = attrs.field(default=1024, validator=_positive)
    max_sessions_per_client: int = attrs.field(default=64, validator=_positive)
    stateless_pool: int = attrs.field(default=32, validator=attrs.validators.ge(0))
    handshake_timeout: float = attrs.field(default=10.0, validator=_positive)
    retry_after: int = attrs.field(default=5, validator=_positive)
    session_idle_timeout: float = attrs.field(default=1800.0, validator=_positive)
    inbound_queue: int = attrs.field(default=128, validator=_positive)
    inbound_wait: float = attrs.field(default=10.0, validator=_positive)
    stream_queue_events: int = attrs.field(default=256, validator=_positive)
    stream_queue_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=_positive)
    send_timeout: float = attrs.field(default=30.0, validator=_positive)
    replay_events: int = attrs.field(default=1000, validator=_positive)
    replay_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=_positive)
    replay_streams: int = attrs.field(default=64, validator=_positive)
    replay_session_bytes: int = attrs.field(default=16 * 1024 * 1024, validator=_positive)
    replay_total_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=_positive)
    output_session_bytes: int = attrs.field(default=32 * 1024 * 1024, validator=_positive)
    output_total_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=_positive)
    sse_retry_ms: int = attrs.field(default=1000, validator=_positive)
    max_dropped: int = attrs.field(default=100, validator=_positive)
    max_connections: int = attrs.field(default=1000, validator=_positive)
    keep_alive_timeout: float = attrs.field(default=5.0, validator=_positive)
    header_timeout: float = attrs.field(default=10.0, validator=_positive)
    pressure: float = attrs.field(default=0.5, validator=_fraction)
    pressure_timeout: float = attrs.field(default=1.0, validator=_positive)
    max_connections_per_client: int = attrs.field(default=250, validator=_positive)
    inbound_total_bytes: int = attrs.field(default=64 * 1024 * 1024, validator=_positive)
    inbound_client_bytes: int = attrs.field(default=16 * 1024 * 1024, validator=_positive)

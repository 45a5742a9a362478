"""Serve a :class:`Server` over Streamable HTTP: as an ASGI app, or on an HTTP server.

:func:`asgi_app` builds the app for mounting in any Trio ASGI server; :func:`serve_http`
runs it on an HTTP/1.1 server and reports the bound port, so
``port = await nursery.start(serve_http, server)`` works with ``port=0``. Two engines
run the same app: ``"h11"`` (the default), a lean server of this package on h11 and
Trio sockets, and ``"hypercorn"``, hypercorn's Trio worker (HTTP/2 and TLS through a
``hypercorn_config``). With one connection per caller, the h11 engine serves several
times the calls per second of hypercorn (benchmarks/README.md).
:func:`close_sse_stream` lets a handler end its request's SSE response early (SSE
polling); the client resumes with ``Last-Event-ID`` and gets the rest, result included.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Final, Literal

import trio

from trimcp.nursery import HandlerContext
from trimcp.store import SharedStore, is_shared
from trimcp.transports.http import (
    ANY_HOST,
    HostPolicy,
    HttpServerLimits,
    HttpSessionChannel,
    StoreUnavailable,
    StreamableHttpApp,
    is_loopback,
    serve_h11,
)

from ._context import ToolContext
from ._lifespan import Serving
from ._request_state import RequestStateSealer
from ._server import Server
from ._shutdown import FLUSH_TIMEOUT, POLL_INTERVAL
from ._task_host import TaskHost

__all__ = ["asgi_app", "close_sse_stream", "host_policy_for", "serve_http"]

logger = logging.getLogger("trimcp.server")

DEFAULT_HTTP_PORT = 8000
#: Seconds between two reads of a shared store's request-state key ring.
KEY_REFRESH: Final = 60.0
Engine = Literal["h11", "hypercorn"]
#: The engine :func:`serve_http` uses unless told otherwise (the faster one, measured).
DEFAULT_ENGINE: Final[Engine] = "h11"
ENGINES: Final = ("h11", "hypercorn")


def host_policy_for(
    host: str | None,
    host_policy: HostPolicy | None,
    allowed_hosts: Iterable[str] | None,
    *,
    what: str = "MCP",
) -> HostPolicy:
    """The DNS-rebinding guard of a server bound to ``host`` (``None``: not known).

    ``host_policy`` as given wins; ``allowed_hosts`` names the hosts (``Host`` and
    ``Origin``) the server answers to besides loopback names and, on other addresses,
    IP literals (``"*"``: any ``Host``). Bound to loopback, every request is held to
    loopback names; bound elsewhere, each request is judged by the address it arrived
    on. A bind that is not loopback logs what the guard will refuse.
    """
    if host_policy is not None:
        if allowed_hosts is not None:
            raise ValueError("give host_policy or allowed_hosts, not both")
        return host_policy
    hosts = frozenset(allowed_hosts or ())
    loopback = host is not None and is_loopback(host)
    if ANY_HOST in hosts:
        logger.warning("serving %s with allowed_hosts '*': any Host is accepted", what)
    elif host is not None and not loopback:
        named = ", ".join(sorted(hosts)) if hosts else "no names"
        logger.warning(
            "serving %s on %s: Host must be an IP literal or one of the allowed hosts "
            "(%s); put authentication in front of it",
            what,
            host,
            named,
        )
    return HostPolicy(loopback=True if loopback else None, allowed_hosts=hosts)


def asgi_app(
    server: Server, *, allowed_hosts: Iterable[str] | None = None, **options: Any
) -> StreamableHttpApp:
    """The Streamable HTTP ASGI app of ``server``.

    ``allowed_hosts`` names the hosts the app answers to besides loopback names and IP
    literals (see :func:`host_policy_for`; or give a whole ``host_policy``). Other
    ``options`` are those of :class:`~trimcp.transports.http.StreamableHttpApp`
    (``path``, ``limits``, ``host_policy``, ``stateless``, ``event_store``,
    ``standalone_get``, and ``legacy_sse``/``sse_path``/``messages_path`` for the
    2024-11-05 HTTP+SSE transport, on by default at ``/sse``). A server made with
    ``auth=`` has every request of those paths authenticated, and serves its protected
    resource metadata (see :mod:`trimcp.server._auth`). The app runs its sessions, the
    server's task nursery and its ``lifespan`` under ASGI lifespan, or in the nursery of
    whoever calls ``await app.run()``. Once ``server.shutdown()`` is called, the app
    answers POSTs carrying requests with 503 (see :mod:`trimcp.server._shutdown`; under
    hypercorn, pass ``shutdown_trigger=server.shutdown_control.wait_done``).

    ``store`` (a store, ``"memory"`` or ``"redis://..."``) is where the server keeps
    its sessions, events and tasks (see ``Server(store=)``); with a shared one, the app
    serves any session of the processes sharing it, and runs the store beside its
    sessions unless it is running already.
    """
    store = options.pop("store", None)
    if store is not None:
        server.use_store(store)
    if allowed_hosts is not None or "host_policy" not in options:
        options["host_policy"] = host_policy_for(
            None, options.pop("host_policy", None), allowed_hosts
        )
    options.setdefault("supported_versions", server.supported_versions)
    options.setdefault("auth", server.auth_gate)  # Server(auth=...): every request verified
    host = server.tasks.host()  # tasks outlive their POSTs and sessions, not this app
    shared = server.store if is_shared(server.store) else None
    if shared is not None:
        limits = options.get("limits") or HttpServerLimits()
        options["limits"] = limits
        shared.configure(limits)
        options.setdefault("shared", shared)
    options.setdefault("background", partial(_background, server, host))
    # The lifespan covers every session of this app; each session sees its state.
    serving = Serving()

    @asynccontextmanager
    async def around() -> AsyncIterator[None]:
        async with server.serving() as entered:
            serving.state = entered.state
            yield

    options.setdefault("around", around)
    # From server.shutdown() on, this app refuses requests with 503 (for good: a server
    # served again after a shutdown gets a new app).
    options.setdefault("draining", server.shutdown_control.round.requested.is_set)
    return StreamableHttpApp(partial(server.serve_channel, tasks=host, serving=serving), **options)


async def serve_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_HTTP_PORT,
    engine: Engine = DEFAULT_ENGINE,
    allowed_hosts: Iterable[str] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Serve ``server`` on ``http://host:port/mcp`` (and HTTP+SSE on ``/sse``) until cancelled
    or shut down.

    ``task_status.started()`` reports the bound port (useful with ``port=0``); only
    ``host`` is bound. The DNS-rebinding guard is on: bound to loopback, ``Host`` and
    ``Origin`` must name loopback; bound elsewhere, ``Host`` must be an IP literal or
    one of ``allowed_hosts`` (``"*"``: any), which a warning says (see
    :func:`host_policy_for`). ``engine`` is ``"h11"`` (default: bounds in
    ``limits``, see :class:`~trimcp.transports.http.HttpServerLimits`) or
    ``"hypercorn"``. Further ``options`` go to :func:`asgi_app`; with hypercorn,
    ``hypercorn_config`` may give a ready :class:`hypercorn.config.Config` (its ``bind``
    is replaced). Cancellation stops the server: requests in progress are cancelled and
    every connection is closed. ``await server.shutdown()`` stops it gracefully (see
    :mod:`trimcp.server._shutdown`): request POSTs get 503 meanwhile, running requests
    get their grace, then this function returns.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    config = options.pop("hypercorn_config", None)
    if config is not None and engine != "hypercorn":
        raise ValueError("hypercorn_config needs engine='hypercorn'")
    options["host_policy"] = host_policy_for(host, options.get("host_policy"), allowed_hosts)
    app = asgi_app(server, **options)
    shutdown = server.shutdown_control.round
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        if engine == "h11":
            serve = partial(serve_h11, app, host=host, port=port, limits=app.limits)
            bound: int = await nursery.start(serve)
            task_status.started(bound)
            await shutdown.finished.wait()
            await _flush(app)
        else:
            async with trio.open_nursery() as http:
                trigger = shutdown.finished.wait  # hypercorn then ends within graceful_timeout
                bound = await http.start(_serve_hypercorn, app, host, port, config, trigger)
                task_status.started(bound)
        nursery.cancel_scope.cancel()


async def _background(
    server: Server,
    host: TaskHost,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """What runs beside an app's sessions: its store (unless something else runs it),
    the shared key ring of sealed request states, and the server's task host."""
    store = server.store
    async with trio.open_nursery() as nursery:
        if not store.running:
            await nursery.start(store.run)
        sealer = server.era.sealer
        if is_shared(store) and not sealer.explicit:
            await nursery.start(_share_keys, store, sealer)
        await nursery.start(host.run)
        task_status.started()


async def _share_keys(
    store: SharedStore,
    sealer: RequestStateSealer,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Seal request states with the store's key ring, read before the app serves and
    again every :data:`KEY_REFRESH` seconds (``trimcp.store``'s ring module says why
    that period). While the store cannot be reached the keys held are kept."""
    await _refresh_keys(store, sealer)
    task_status.started()
    while True:
        await trio.sleep(KEY_REFRESH)
        await _refresh_keys(store, sealer)


async def _refresh_keys(store: SharedStore, sealer: RequestStateSealer) -> None:
    try:
        sealer.use_keys(await store.request_state_keys())
    except StoreUnavailable as exc:
        logger.warning("request-state keys not refreshed from the store: %s", exc)


async def _flush(app: StreamableHttpApp) -> None:
    """After a shutdown closed the sessions: let responses finish writing, bounded."""
    # Polled: the per-request path keeps no wake-up for this one moment.
    with trio.move_on_after(FLUSH_TIMEOUT):
        while app.exchanges:  # noqa: ASYNC110
            await trio.sleep(POLL_INTERVAL)


async def _serve_hypercorn(
    app: StreamableHttpApp,
    host: str,
    port: int,
    config: Any,
    trigger: Callable[[], Awaitable[None]],
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    serve: Any = hypercorn_serve  # its app type is a union of TypedDict signatures
    if config is None:
        config = Config()
    bind_host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    config.bind = [f"{bind_host}:{port}"]
    config.accesslog = None
    config.graceful_timeout = min(config.graceful_timeout, 3.0)
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            partial(serve, app, config, shutdown_trigger=trigger)
        )
        task_status.started(int(binds[0].rsplit(":", 1)[1]) if binds else port)


async def close_sse_stream(
    ctx: ToolContext | HandlerContext, *, retry_ms: int | None = None
) -> bool:
    """End the HTTP response of ``ctx``'s request now; the request keeps running.

    The client reconnects (``GET`` with ``Last-Event-ID``, after ``retry_ms``) and gets
    everything the request sends afterwards, its result included. Returns ``False``
    when there is no such stream to close: not on Streamable HTTP, no event store, or
    the request was already answered.
    """
    handler = ctx.handler if isinstance(ctx, ToolContext) else ctx
    channel = handler.session_object.channel
    if not isinstance(channel, HttpSessionChannel):
        return False
    return await channel.close_request_stream(handler.request_id, retry_ms=retry_ms)

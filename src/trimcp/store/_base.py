"""The store interface: where the state of an MCP server lives.

Two implementations: :class:`MemoryStore` (the default: sessions, SSE events, tasks
and subscriptions live in this process, as they always did, with no dependency and
nothing added to the request path) and :class:`~._redis.RedisStore` (the ``redis``
extra: N processes behind a load balancer share them, and any process serves any
request). :func:`open_store` makes either from a spec (``"memory"``,
``"redis://host:port/db"``), which is what ``trimcp serve --store`` and the ``store=``
options take.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeGuard, final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import trio

from trimcp.transports.http import (
    Envelope,
    HttpServerLimits,
    SessionRecord,
    SharedEvents,
)

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = ["MemoryStore", "SharedStore", "Store", "is_shared", "open_store"]


class Store(Protocol):
    """What every store is (module doc)."""

    #: Whether other processes see this state (then sessions may be served anywhere).
    @property
    def shared(self) -> bool: ...

    @property
    def running(self) -> bool: ...

    async def run(self, *, task_status: trio.TaskStatus[None] = ...) -> None:
        """Serve the store until cancelled (connections, leases, relays)."""
        ...


class SharedStore(Store, Protocol):
    """A store several processes share: everything the HTTP server and the MCP server
    ask of it (``trimcp.transports.http.SharedSessions`` and what the server adds)."""

    process: int
    retry_after: int

    @property
    def available(self) -> bool: ...

    def configure(self, limits: HttpServerLimits) -> None: ...

    async def create_session(self, session_id: str, owner: str | None) -> None: ...

    async def load_session(self, session_id: str) -> SessionRecord | None: ...

    async def save_session(self, session_id: str, fields: Mapping[str, str]) -> None: ...

    async def touch_session(self, session_id: str) -> None: ...

    async def end_session(self, session_id: str) -> None: ...

    async def live_sessions(self) -> list[str]: ...

    async def subscribe_uri(self, session_id: str, uri: str, subscribed: bool) -> None: ...

    async def uri_subscribers(self, uri: str) -> list[str]: ...

    async def save_task(self, task_id: str, doc: bytes, ttl_ms: int, index: str | None) -> None: ...

    async def load_task(self, task_id: str) -> bytes | None: ...

    async def task_index(self, index: str) -> list[bytes]: ...

    def events(self, session_id: str) -> SharedEvents: ...

    async def send(self, envelope: Envelope, *, to: int | None) -> None: ...

    def on_envelope(self, handler: Callable[[Envelope], None]) -> None: ...

    def later(self, work: Callable[[], Awaitable[None]]) -> None: ...

    async def alive(self, processes: set[int]) -> set[int]: ...

    async def request_state_keys(self) -> list[tuple[str, bytes]]:
        """The key ring every process seals request states with, the sealing key first
        (``StoreUnavailable`` while the store cannot be reached)."""
        ...


def is_shared(store: Store) -> TypeGuard[SharedStore]:
    """Whether ``store`` is shared with other processes."""
    return store.shared


@final
class MemoryStore:
    """State in this process only: the default (module doc).

    It keeps nothing itself: the HTTP app's session table and its bounded in-memory
    event stores, the server's task table and subscriptions are the state, as they
    were before stores existed; choosing it changes nothing on any path.
    """

    shared: Final = False

    @property
    def running(self) -> bool:
        return True

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await trio.sleep_forever()


def open_store(spec: Store | str | None) -> Store:
    """The store ``spec`` names: a store as is; ``None`` or ``"memory"``, a
    :class:`MemoryStore`; ``"redis://..."`` (``rediss://``, ``unix://``), a
    :class:`~._redis.RedisStore` (needs the ``redis`` extra), whose ``prefix``,
    ``lease_ttl``, ``op_timeout`` and ``retry_after`` may be given in the URL's query."""
    if spec is None or spec == "memory":
        return MemoryStore()
    if not isinstance(spec, str):
        return spec
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return _redis_store(spec)
    raise ValueError(f"unknown store {spec!r}: 'memory' or a redis:// URL")


#: Query parameters of a store URL that are the store's own (the rest go to coredis).
_OPTIONS: Final[dict[str, Callable[[str], Any]]] = {
    "prefix": str,
    "lease_ttl": float,
    "op_timeout": float,
    "retry_after": int,
}


def _redis_store(url: str) -> RedisStore:
    """A :class:`~._redis.RedisStore` for ``url``; its own options may ride in the query
    (``?prefix=app:&lease_ttl=2``)."""
    try:
        from ._redis import RedisStore
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError("the Redis store needs coredis: pip install 'trimcp[redis]'") from exc
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options: dict[str, Any] = {}
    for name, value in query:
        convert = _OPTIONS.get(name)
        if convert is not None:
            try:
                options[name] = convert(value)
            except ValueError:
                raise ValueError(f"bad {name} in the store URL: {value!r}") from None
    rest = urlencode([(k, v) for k, v in query if k not in _OPTIONS])
    return RedisStore(urlunsplit(parts._replace(query=rest)), **options)

"""Response caching that honours the 2026-07-28 cache hints (``ttlMs``, ``cacheScope``).

On a server's stacks: a request for a cacheable method (lists, ``resources/read``) whose
answer is in the cache and fresh is answered from it, without reaching its handler.
What is cached, and for how long, is what the server's own results say: a result with
``ttlMs`` > 0 is kept that long (a result without hints only with ``default_ttl_ms``);
``cacheScope: "public"`` results are shared by every caller, ``"private"`` ones only
with callers of the same key (:func:`~trimcp.middleware.per_session` by default, or
:func:`~trimcp.middleware.per_principal`). An answer served from the cache carries the
``ttlMs`` that is left.

The key of a request is its method, its params (``_meta`` aside) and the protocol
revision it is served in (results differ across revisions). ``list_changed``
notifications going out drop that kind's entries, ``notifications/resources/updated``
that resource's. The cache holds at most ``max_entries`` (:data:`DEFAULT_MAX_ENTRIES`),
least recently used first out.
"""

from __future__ import annotations

import collections
import json
import math
from collections.abc import Collection, Hashable
from typing import Any, Final, final

import attrs
import trio

from trimcp.dispatch import CallNext
from trimcp.nursery import Session
from trimcp.protocol import PROTOCOL_VERSION_META
from trimcp.wire import Message, Notification, Request, Response

from ._base import DEFAULT_MAX_TRACKED, Requests, RoleMiddleware, answer
from ._ratelimit import KeyFunction, per_session

__all__ = ["CACHEABLE", "DEFAULT_MAX_ENTRIES", "ResponseCache"]

DEFAULT_MAX_ENTRIES: Final = 1024
CACHEABLE: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
_INVALIDATES: Final = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


@attrs.define
class _Entry:
    result: dict[str, Any]
    expires: float
    method: str
    uri: str | None


@final
class ResponseCache(RoleMiddleware):
    """Answers repeated cacheable requests from a bounded cache; see the module doc.

    Args:
      max_entries: results kept at once.
      methods: the methods cached (default :data:`CACHEABLE`).
      key: the caller key of ``"private"`` entries (default per session).
      default_ttl_ms: how long to keep a result that carries no ``ttlMs`` (default 0:
        not at all), as ``cacheScope`` ``"private"``.
    """

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        methods: Collection[str] = CACHEABLE,
        key: KeyFunction = per_session,
        default_ttl_ms: int = 0,
        max_tracked: int = DEFAULT_MAX_TRACKED,
    ) -> None:
        if max_entries <= 0 or default_ttl_ms < 0:
            raise ValueError("max_entries must be positive and default_ttl_ms not negative")
        self.max_entries = max_entries
        self.methods = frozenset(methods)
        self.key = key
        self.default_ttl_ms = default_ttl_ms
        self._entries: collections.OrderedDict[Hashable, _Entry] = collections.OrderedDict()
        self._waiting: Requests[tuple[Hashable, Hashable | None, str | None]] = Requests(
            max_tracked
        )
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    async def received(self, session: Session, message: Message, call_next: CallNext) -> None:
        if not isinstance(message, Request) or message.method not in self.methods:
            await call_next(message)
            return
        shared = _request_key(session, message)
        caller = self.key(session, message)
        private = None if caller is None else (caller, shared)
        now = trio.current_time()
        for key in (shared, private):
            entry = None if key is None else self._entries.get(key)
            if entry is not None and entry.expires > now:
                self._entries.move_to_end(key)
                self.hits += 1
                left = math.floor((entry.expires - now) * 1000)
                await answer(session, message, result={**entry.result, "ttlMs": left})
                return
        self.misses += 1
        params = message.params or {}
        uri = params.get("uri") if isinstance(params.get("uri"), str) else None
        self._waiting.note(session, message.id, (shared, private, uri))
        await call_next(message)

    async def sending(self, session: Session, message: Message, call_next: CallNext) -> None:
        if isinstance(message, Response):
            keys = self._waiting.pop(session, message.id)
            if keys is not None:
                self._store(message.result, *keys)
        elif isinstance(message, Notification):
            self._invalidate(message)
        await call_next(message)

    def _store(
        self, result: dict[str, Any], shared: Hashable, private: Hashable | None, uri: str | None
    ) -> None:
        ttl = result.get("ttlMs")
        scope = result.get("cacheScope")
        if not isinstance(ttl, int) or isinstance(ttl, bool):
            ttl, scope = self.default_ttl_ms, "private"
        key = shared if scope == "public" else private
        if ttl <= 0 or key is None:
            return
        method = shared[0] if isinstance(shared, tuple) else ""
        self._entries[key] = _Entry(result, trio.current_time() + ttl / 1000, str(method), uri)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def _invalidate(self, note: Notification) -> None:
        methods = _INVALIDATES.get(note.method)
        uri = (note.params or {}).get("uri")
        if methods is None and not (note.method == "notifications/resources/updated" and uri):
            return
        for key, entry in list(self._entries.items()):
            if (methods is not None and entry.method in methods) or (
                methods is None and entry.method == "resources/read" and entry.uri == uri
            ):
                del self._entries[key]

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()


def _request_key(session: Session, request: Request) -> tuple[str, str, str]:
    params = dict(request.params or {})
    meta = params.pop("_meta", None)
    version = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        version = session.state.protocol_version or ""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return (request.method, version, text)

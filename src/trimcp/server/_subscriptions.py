"""``subscriptions/listen`` (2026-07-28): change notifications without sessions.

A listen request is a long-running request like any other: its handler runs in the
request's own scope, so the ways a request ends are the ways a subscription ends. The
client closing the SSE stream (HTTP) or sending ``notifications/cancelled`` (stdio)
cancels that scope, and nothing more is sent for it; the server shutting down ends it
with a ``SubscriptionsListenResult``. Each subscription:

1. answers first with ``notifications/subscriptions/acknowledged`` carrying the subset
   of the filter it honours (a kind the server cannot deliver is left out), tagged
   with ``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id;
2. then relays, tagged the same way, exactly the kinds it acknowledged:
   ``notifications/{tools,prompts,resources}/list_changed`` and
   ``notifications/resources/updated`` for the subscribed URIs, and
   ``notifications/tasks`` for the agreed ``taskIds`` (tasks extension, see ``_tasks``).

Bounds: at most ``max_listeners`` subscriptions at once per server (default
:data:`DEFAULT_MAX_LISTENERS`; beyond it a listen request is refused with ``-32600``
naming the bound), at most :data:`MAX_RESOURCE_SUBSCRIPTIONS` URIs per subscription, and a queue of
:data:`LISTENER_QUEUE` pending notifications per subscription. A listener that falls
that far behind has its queue coalesced: list-changed notices are idempotent, so only
one of each kind is kept, and the oldest ``updated`` notices are dropped (counted in
:attr:`SubscriptionHub.dropped`), as are task status notices (``tasks/get`` still
answers the latest state).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final, final

import trio

from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext
from trimcp.protocol import SUBSCRIPTION_ID_META, ServerCapabilities
from trimcp.wire import INVALID_PARAMS, INVALID_REQUEST, RequestId

__all__ = [
    "DEFAULT_MAX_LISTENERS",
    "LISTENER_QUEUE",
    "MAX_RESOURCE_SUBSCRIPTIONS",
    "SubscriptionHub",
]

DEFAULT_MAX_LISTENERS: Final = 1024
MAX_RESOURCE_SUBSCRIPTIONS: Final = 256
LISTENER_QUEUE: Final = 256

_LIST_KINDS: Final = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
_UPDATED: Final = "notifications/resources/updated"
_TASKS: Final = "notifications/tasks"
_DROPPABLE: Final = frozenset({_UPDATED, _TASKS})


@final
class _Listener:
    __slots__ = ("dropped", "ended", "kinds", "queue", "request_id", "task_ids", "uris", "wakeup")

    def __init__(
        self, request_id: RequestId, kinds: set[str], uris: set[str], task_ids: set[str]
    ) -> None:
        self.request_id = request_id
        self.kinds = kinds
        self.uris = uris
        self.task_ids = task_ids
        self.queue: deque[tuple[str, dict[str, Any] | None]] = deque()
        self.wakeup = trio.Event()
        self.dropped = 0
        self.ended = False

    def put(self, method: str, params: dict[str, Any] | None) -> None:
        if len(self.queue) >= LISTENER_QUEUE:
            self._coalesce()
        self.queue.append((method, params))
        self.wakeup.set()

    def _coalesce(self) -> None:
        kept: deque[tuple[str, dict[str, Any] | None]] = deque()
        seen: set[str] = set()
        for method, params in self.queue:
            if method in _DROPPABLE or method in seen:
                self.dropped += 1
                continue
            seen.add(method)
            kept.append((method, params))
        self.queue = kept


@final
class SubscriptionHub:
    """The live ``subscriptions/listen`` streams of one server."""

    def __init__(self, max_listeners: int = DEFAULT_MAX_LISTENERS) -> None:
        self.max_listeners = max_listeners
        self._listeners: set[_Listener] = set()
        #: Hands every notice to the other processes of a shared store (``None``: none).
        self.relay: Callable[[str, dict[str, Any] | None], None] | None = None

    def __len__(self) -> int:
        return len(self._listeners)

    @property
    def dropped(self) -> int:
        """Notifications dropped from listeners that fell behind (see the module doc)."""
        return sum(listener.dropped for listener in self._listeners)

    def end_all(self) -> None:
        """End every subscription with its ``SubscriptionsListenResult`` (shutdown)."""
        for listener in self._listeners:
            listener.ended = True
            listener.wakeup.set()

    def publish(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue a change notification for every listener that asked for its kind,
        here and (with a shared store) on every other process."""
        self.publish_local(method, params)
        if self.relay is not None:
            self.relay(method, params)

    def publish_local(self, method: str, params: dict[str, Any] | None = None) -> None:
        """:meth:`publish`, to the listeners of this process only."""
        for listener in self._listeners:
            if method == _UPDATED:
                uri = (params or {}).get("uri")
                if uri in listener.uris:
                    listener.put(method, params)
            elif method == _TASKS:
                if (params or {}).get("taskId") in listener.task_ids:
                    listener.put(method, params)
            elif method in listener.kinds:
                listener.put(method, params)

    @staticmethod
    def honoured(filter_: dict[str, Any], caps: ServerCapabilities) -> dict[str, Any]:
        """The part of the client's filter this server can deliver."""
        out: dict[str, Any] = {}
        can = {
            "toolsListChanged": caps.tools is not None,
            "promptsListChanged": caps.prompts is not None,
            "resourcesListChanged": caps.resources is not None,
        }
        for key in _LIST_KINDS:
            if filter_.get(key) is True and can[key]:
                out[key] = True
        uris = filter_.get("resourceSubscriptions")
        if uris is not None:
            if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
                raise McpError(INVALID_PARAMS, "Invalid params: resourceSubscriptions")
            if len(uris) > MAX_RESOURCE_SUBSCRIPTIONS:
                raise McpError(
                    INVALID_PARAMS,
                    f"Invalid params: at most {MAX_RESOURCE_SUBSCRIPTIONS} resourceSubscriptions",
                )
            if caps.resources is not None and caps.resources.subscribe:
                out["resourceSubscriptions"] = list(dict.fromkeys(uris))
        task_ids = filter_.get("taskIds")  # already cut to the agreed ids (server._tasks)
        if isinstance(task_ids, list):
            out["taskIds"] = task_ids
        return out

    async def listen(self, ctx: HandlerContext, params: dict[str, Any]) -> dict[str, Any]:
        """Serve one ``subscriptions/listen`` request until it is cancelled."""
        filter_ = params.get("notifications")
        if not isinstance(filter_, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: notifications filter is required")
        if len(self._listeners) >= self.max_listeners:
            raise McpError(
                INVALID_REQUEST,
                f"Invalid Request: at most {self.max_listeners} subscriptions at once",
            )
        honoured = self.honoured(filter_, ctx.session.server_capabilities)
        tag = {SUBSCRIPTION_ID_META: ctx.request_id}
        listener = _Listener(
            ctx.request_id,
            {_LIST_KINDS[k] for k in _LIST_KINDS if honoured.get(k)},
            set(honoured.get("resourceSubscriptions", ())),
            set(honoured.get("taskIds", ())),
        )
        self._listeners.add(listener)
        try:
            await ctx.notify(
                "notifications/subscriptions/acknowledged",
                {"notifications": honoured, "_meta": dict(tag)},
            )
            while not listener.ended:
                await listener.wakeup.wait()
                listener.wakeup = trio.Event()
                while listener.queue:
                    # A listen cancelled while it relayed sends nothing more, on every
                    # transport (an HTTP channel queues a message without a checkpoint).
                    await trio.lowlevel.checkpoint_if_cancelled()
                    method, note = listener.queue.popleft()
                    await ctx.notify(method, {**(note or {}), "_meta": dict(tag)})
            return {"_meta": dict(tag)}
        finally:
            self._listeners.discard(listener)

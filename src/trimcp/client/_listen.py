"""``subscriptions/listen`` on the client (2026-07-28): change notifications as a stream.

The stateless era has no session to push notifications on. A client that wants
``list_changed`` or ``resources/updated`` notifications sends a long-running
``subscriptions/listen`` request; the server first sends
``notifications/subscriptions/acknowledged`` (the subset of the filter it honours),
then every notification the client opted into, each tagged with
``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id; it ends
the subscription gracefully by answering the request.

``async with client.listen(tools=True) as sub:`` returns once the server acknowledged;
``async for note in sub`` yields the subscription's notifications (wire
:class:`~trimcp.wire.Notification` objects) until the server ends it. Several
subscriptions may be open at once; notifications are demultiplexed by their tag, so
on stdio too each reaches only its own subscription (and still reaches the client's
``on_resource_updated``-style callbacks). Leaving the block cancels the request: on
stdio ``notifications/cancelled`` goes out, on HTTP the response stream is closed,
which is how that transport cancels.

Bounds: :data:`DEFAULT_MAX_SUBSCRIPTIONS` open at once per client; each buffers
:data:`DEFAULT_LISTEN_BUFFER` notifications the reader has not taken yet, and counts
(``dropped``) the ones that did not fit rather than stall the whole connection.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, final

import trio

from trimcp.dispatch import CallNext, McpError, MiddlewareStack
from trimcp.nursery import Session
from trimcp.protocol import SUBSCRIPTION_ID_META
from trimcp.wire import INVALID_REQUEST, METHOD_NOT_FOUND, Message, Notification, Request, RequestId

if TYPE_CHECKING:
    from ._era import EraState

__all__ = [
    "ACKNOWLEDGED",
    "DEFAULT_LISTEN_BUFFER",
    "DEFAULT_MAX_SUBSCRIPTIONS",
    "ListenCalls",
    "Listeners",
    "Subscription",
]

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
DEFAULT_LISTEN_BUFFER: Final = 256
#: The method that opens a subscription.
LISTEN_METHOD: Final = "subscriptions/listen"
"""Notifications one subscription buffers for its reader."""
DEFAULT_MAX_SUBSCRIPTIONS: Final = 64
"""Subscriptions one client keeps open at once."""

_BINDING: contextvars.ContextVar[Subscription | None] = contextvars.ContextVar(
    "trimcp_listen_binding", default=None
)


@final
class Subscription:
    """One open ``subscriptions/listen`` stream; iterate it for its notifications."""

    def __init__(self, buffer: int = DEFAULT_LISTEN_BUFFER) -> None:
        #: The listen request's id (the ``subscriptionId`` of its notifications).
        self.id: RequestId | None = None
        #: The filter the server agreed to honour (its acknowledgement).
        self.acknowledged: dict[str, Any] | None = None
        #: Notifications dropped because the reader fell ``buffer`` behind.
        self.dropped = 0
        #: The server's final result when it ended the subscription gracefully.
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None
        self._send, self._receive = trio.open_memory_channel[Notification](buffer)
        self._ready = trio.Event()

    def _deliver(self, note: Notification) -> None:
        if note.method == ACKNOWLEDGED:
            params = note.params or {}
            found = params.get("notifications")
            self.acknowledged = found if isinstance(found, dict) else {}
            self._ready.set()
            return
        try:
            self._send.send_nowait(note)
        except trio.WouldBlock:
            self.dropped += 1
        except trio.ClosedResourceError:
            pass

    def _end(self, result: dict[str, Any] | None, error: McpError | None) -> None:
        self.result, self.error = result, error
        self._send.close()
        self._ready.set()

    async def wait_acknowledged(self) -> None:
        """Wait for the server's acknowledgement (raises if the request failed first)."""
        await self._ready.wait()
        if self.acknowledged is None:
            raise self.error or McpError(INVALID_REQUEST, "the subscription ended unacknowledged")

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Notification:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            if self.error is not None:
                raise self.error from None
            raise StopAsyncIteration from None


@final
class Listeners:
    """The open subscriptions of one client; its send and receive middleware."""

    def __init__(self, max_subscriptions: int = DEFAULT_MAX_SUBSCRIPTIONS) -> None:
        self.max_subscriptions = max_subscriptions
        self._open: dict[RequestId, Subscription] = {}
        self._running = 0
        self._stack: MiddlewareStack | None = None

    def attach(self, stack: MiddlewareStack) -> None:
        """Route through ``stack`` (the client's receive stack): :meth:`route` is in it
        while a subscription is open, and only then, so that the messages of a client
        with none (nearly every message) pass no layer for it."""
        self._stack = stack
        if self._open:
            stack.add(self.route)

    def _opened(self, request_id: RequestId, sub: Subscription) -> None:
        if not self._open and self._stack is not None:
            self._stack.add(self.route)  # outermost: the stack has nothing else of its own
        self._open[request_id] = sub

    def _closed(self, request_id: RequestId) -> None:
        closed = self._open.pop(request_id, None) is not None
        if closed and not self._open and self._stack is not None:
            self._stack.remove(self.route)

    def __len__(self) -> int:
        return len(self._open)

    def bind(self, message: Message) -> None:
        """Learn the id of a listen request as it goes out (before the send middleware)."""
        sub = _BINDING.get()
        listen = isinstance(message, Request) and message.method == LISTEN_METHOD
        if sub is not None and sub.id is None and listen:
            assert isinstance(message, Request)
            sub.id = message.id
            self._opened(message.id, sub)

    def route(self, message: Message, call_next: CallNext) -> Awaitable[None]:
        """Client-receive middleware: hand tagged notifications to their subscription.

        A plain function returning the next layer's awaitable: every message the client
        reads passes here, and a coroutine of its own each would be a frame per message.
        """
        if self._open and isinstance(message, Notification) and message.params:
            meta = message.params.get("_meta")
            tag = meta.get(SUBSCRIPTION_ID_META) if isinstance(meta, dict) else None
            sub = self._open.get(tag) if isinstance(tag, str | int) else None
            if sub is not None:
                sub._deliver(message)
                if message.method == ACKNOWLEDGED:
                    return _consumed()
        return call_next(message)

    async def run(self, session: Session, params: dict[str, Any], sub: Subscription) -> None:
        """The listen request, for as long as it lasts (a task of ``Client.listen``)."""
        if self._running >= self.max_subscriptions:
            sub._end(None, McpError(INVALID_REQUEST, "too many open subscriptions"))
            return
        self._running += 1
        token = _BINDING.set(sub)
        result: dict[str, Any] | None = None
        error: McpError | None = None
        try:
            result = await session.request(LISTEN_METHOD, params, timeout=math.inf)
        except McpError as exc:  # ConnectionClosedError included
            error = exc
        finally:
            _BINDING.reset(token)
            self._running -= 1
            if sub.id is not None:
                self._closed(sub.id)
            sub._end(result, error)


async def _consumed() -> None:
    """A message the subscription consumed: nothing more to do with it."""


def listen_params(
    *,
    tools: bool,
    prompts: bool,
    resources: bool,
    resource_uris: list[str],
) -> dict[str, Any]:
    """The ``subscriptions/listen`` params for the given opt-ins."""
    wanted: dict[str, Any] = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    if resource_uris:
        wanted["resourceSubscriptions"] = list(resource_uris)
    return {"notifications": wanted}


@asynccontextmanager
async def open_subscription(
    listeners: Listeners, session: Session, params: dict[str, Any], buffer: int
) -> AsyncIterator[Subscription]:
    """The body of ``Client.listen``: the subscription, once acknowledged."""
    sub = Subscription(buffer)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(listeners.run, session, params, sub)
        try:
            await sub.wait_acknowledged()
            yield sub
        finally:
            nursery.cancel_scope.cancel()


class ListenCalls:
    """``Client.listen`` and the era it needs, mixed into ``Client``."""

    session: Session
    era: EraState
    _listeners: Listeners

    @property
    def stateless(self) -> bool:
        """Whether this client speaks the stateless era (2026-07-28) with its server."""
        return self.era.stateless

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        buffer: int = DEFAULT_LISTEN_BUFFER,
    ) -> AsyncIterator[Subscription]:
        """Open a ``subscriptions/listen`` stream (stateless era; see the module doc).

        ``tools``/``prompts``/``resources`` opt into the ``list_changed`` notifications,
        ``resource_uris`` into ``notifications/resources/updated`` for those URIs.
        Returns once the server acknowledged; leaving the block cancels the stream.
        """
        if not self.era.stateless:
            raise McpError(METHOD_NOT_FOUND, "subscriptions/listen needs a stateless-era server")
        params = listen_params(
            tools=tools, prompts=prompts, resources=resources, resource_uris=list(resource_uris)
        )
        async with open_subscription(self._listeners, self.session, params, buffer) as sub:
            yield sub

"""Rate limiting: a token bucket per session, per principal, or per any key.

Each request (notifications and answers are never limited, nor ``initialize``) takes
one token from its key's bucket; a bucket holds up to ``burst`` tokens and refills at
``rate`` tokens per second. A request that finds its bucket empty is answered at once
with ``-32000`` (``Rate limit exceeded``, ``data: {"retryAfterMs": ...}``) and never
reaches its handler. Over Streamable HTTP the same answer goes out with status 429 and
``Retry-After`` (in whole seconds, rounded up), when it is its POST's whole body: the
middleware asks the transport through ``answer_status``, which other transports do not
have.

The key function picks the bucket: :func:`per_session` (the default) or
:func:`per_principal`, or any ``key(session, request) -> Hashable | None`` (``None``:
not limited). The buckets are bounded (``max_keys``, :data:`DEFAULT_MAX_KEYS`): past it
the least recently used bucket is forgotten, which can only make a key's next request
more welcome, never refuse one wrongly.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Awaitable, Callable, Hashable
from typing import Final, final

import trio

from trimcp.dispatch import CallNext, Middlewares
from trimcp.nursery import Session
from trimcp.wire import ErrorObject, Message, Request

from ._base import RoleMiddleware, answer

__all__ = [
    "DEFAULT_MAX_KEYS",
    "RATE_LIMITED",
    "RateLimit",
    "per_principal",
    "per_session",
]

#: Buckets kept at once (least recently used forgotten first).
DEFAULT_MAX_KEYS: Final = 10_000
#: The JSON-RPC code of a refused request (the implementation-defined server range).
RATE_LIMITED: Final = -32000
#: Never limited: the handshake, and the liveness check.
EXEMPT: Final = frozenset({"initialize", "ping"})

KeyFunction = Callable[[Session, Request], Hashable | None]


def per_session(session: Session, request: Request) -> Hashable:
    """One bucket per session (the default).

    A session whose channel is lent to one caller at a time (a stateless-era POST over
    HTTP borrows one of a pool of idle sessions) is keyed by its channel's ``lease``,
    a fresh object per borrower: unrelated callers never share a bucket. Key such
    requests by principal (:func:`per_principal`) or by a function of your own to
    group them."""
    lease = getattr(session.channel, "lease", None)
    return session if lease is None else lease


def per_principal(session: Session, request: Request) -> Hashable | None:
    """One bucket per authenticated principal, where server auth put one on the session
    (``session.principal``, its ``subject`` when it has one); per session otherwise."""
    principal = getattr(session, "principal", None)
    if principal is None:
        return session
    subject = getattr(principal, "subject", None)
    return ("principal", subject if subject is not None else principal)


@final
class _Bucket:
    __slots__ = ("stamp", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp


@final
class RateLimit(RoleMiddleware):
    """A token bucket per key on a server's (or a client's) inbound requests.

    Args:
      rate: tokens added per second (sustained requests per second).
      burst: bucket size (requests allowed at once after a quiet spell); default
        ``max(1, rate)``.
      key: which bucket a request takes from (default :func:`per_session`).
      max_keys: buckets kept at once.
    """

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        key: KeyFunction = per_session,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        if rate <= 0 or (burst is not None and burst < 1) or max_keys <= 0:
            raise ValueError("rate must be positive, burst at least 1, max_keys positive")
        self.rate = rate
        self.burst = float(burst if burst is not None else max(1.0, rate))
        self.key = key
        self.max_keys = max_keys
        self._buckets: collections.OrderedDict[Hashable, _Bucket] = collections.OrderedDict()
        #: Requests refused so far.
        self.refused = 0

    def install(self, middlewares: Middlewares, role: str = "server") -> Middlewares:
        """Add to ``role``'s receive stack (the only side it needs)."""
        stack = middlewares.server_recv if role == "server" else middlewares.client_recv
        stack.add(_RecvSide(self))
        return middlewares

    def wait_for(self, key: Hashable) -> float:
        """Take a token for ``key``: 0 when granted, else seconds until one is there."""
        now = trio.current_time()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self.burst, now)
            if len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate

    async def received(self, session: Session, message: Message, call_next: CallNext) -> None:
        if not isinstance(message, Request) or message.method in EXEMPT:
            await call_next(message)
            return
        key = self.key(session, message)
        wait = 0.0 if key is None else self.wait_for(key)
        if wait <= 0:
            await call_next(message)
            return
        self.refused += 1
        retry_ms = math.ceil(wait * 1000)
        hint = getattr(session.channel, "answer_status", None)
        if hint is not None:
            hint(message.id, 429, [("Retry-After", str(math.ceil(wait)))])
        await answer(
            session,
            message,
            error=ErrorObject(
                code=RATE_LIMITED,
                message=f"Rate limit exceeded; retry after {retry_ms} ms",
                data={"retryAfterMs": retry_ms},
            ),
        )


@final
class _RecvSide:
    __slots__ = ("owner",)

    def __init__(self, owner: RateLimit) -> None:
        self.owner = owner

    def bind(self, session: Session) -> Callable[[Message, CallNext], Awaitable[None]]:
        received = self.owner.received

        def middleware(message: Message, call_next: CallNext) -> Awaitable[None]:
            return received(session, message, call_next)

        return middleware

"""One bounded, health-tracked link to Redis (coredis, on anyio, so on Trio).

Every operation runs under :meth:`RedisLink.call`: it takes at most ``op_timeout``
seconds, and any failure of Redis (refused, reset, timed out, an error reply) becomes
:class:`~trimcp.transports.http.StoreUnavailable`. The link remembers the failure
(:attr:`RedisLink.available` is ``False``) until an operation succeeds again, so that
requests arriving meanwhile are refused at once (503) instead of each waiting out the
bound; the store's lease loop probes it every ``probe_interval`` seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, final

import anyio
import coredis
import coredis.commands
import coredis.exceptions
import trio
from coredis.retry import NoRetryPolicy

from trimcp.transports.http import StoreUnavailable

__all__ = ["STORE_ERRORS", "RedisLink", "is_store_error", "without_store_errors"]

logger = logging.getLogger("trimcp.store")

T = TypeVar("T")

#: What a failing Redis raises (coredis' errors, timeouts, socket errors).
STORE_ERRORS: tuple[type[BaseException], ...] = (
    coredis.exceptions.RedisError,
    TimeoutError,
    trio.TooSlowError,
    OSError,
    trio.BrokenResourceError,
    trio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


def text(value: Any) -> str:
    """A Redis reply (bytes: the client does not decode) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def is_store_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or every leaf of an exception group) is a failure of Redis."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_store_error(e) for e in exc.exceptions)
    return isinstance(exc, (*STORE_ERRORS, StoreUnavailable))


def without_store_errors(exc: BaseException) -> BaseException | None:
    """``exc`` without its failures of Redis (``None``: nothing else is left), for
    the exit of a coredis block that was cancelled while its connection closed."""
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split(lambda e: not isinstance(e, BaseExceptionGroup) and is_store_error(e))
        return rest
    return None if is_store_error(exc) else exc


@final
class RedisLink:
    """The coredis client of one store and the health it has shown (module doc)."""

    def __init__(self, url: str, *, op_timeout: float, max_connections: int = 64) -> None:
        self.url = url
        self.op_timeout = op_timeout
        self.client: coredis.Redis[bytes] = coredis.Redis.from_url(
            url,
            decode_responses=False,
            retry_policy=NoRetryPolicy(),
            stream_timeout=op_timeout,
            connect_timeout=op_timeout,
            max_connections=max_connections,
            verify_version=False,
        )
        self.available = True
        #: Failures seen (a counter for tests and metrics).
        self.failures = 0
        self._scripts: dict[str, coredis.commands.Script[bytes]] = {}

    async def call(self, operation: Callable[[coredis.Redis[bytes]], Awaitable[T]]) -> T:
        """``await operation(client)`` within ``op_timeout``; a Redis failure raises
        :class:`StoreUnavailable` and marks the link unavailable."""
        try:
            with trio.fail_after(self.op_timeout):
                result = await operation(self.client)
        except coredis.exceptions.ResponseError as exc:  # it answered: reachable
            logger.error("Redis at %s refused an operation: %s", self.url, exc)
            raise StoreUnavailable(str(exc)) from None
        except STORE_ERRORS as exc:
            self.failed(exc)
            raise StoreUnavailable(str(exc) or type(exc).__name__) from None
        if not self.available:
            logger.info("Redis at %s answers again", self.url)
        self.available = True
        return result

    def failed(self, exc: BaseException) -> None:
        if self.available:
            logger.warning("Redis at %s cannot be reached: %s", self.url, exc)
        self.available = False
        self.failures += 1

    async def script(self, source: str, keys: list[str], args: list[Any]) -> Any:
        """Run a Lua ``source`` (cached by its digest on the server)."""
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = self.client.register_script(source)
        return await self.call(lambda _: script(keys=keys, args=args))

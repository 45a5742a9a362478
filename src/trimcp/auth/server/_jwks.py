"""A cached JSON Web Key Set: the authorization server's public signing keys.

Theory of operation. Keys are fetched from ``jwks_uri`` on first use and kept for
``ttl`` seconds; after that the next verification refreshes them. A token naming a key id
the set does not hold (the authorization server rotated its keys) triggers one refetch,
at most once per ``min_refetch`` seconds, so a flood of tokens with made-up key ids costs
one fetch per interval, not one per token. Concurrent verifications share one fetch (a
lock; whoever holds it fetches, the others then read the cache).

Every fetch is bounded: ``timeout`` seconds, ``max_bytes`` of body, ``max_keys`` keys.
When a refresh fails the keys already held stay in use (an unreachable key server must
not lock out callers whose keys are known); with no keys at all, verification is
unavailable (:class:`~._principal.VerifierUnavailable`: the request gets 503 with
``Retry-After``). Keys that carry private members, are not for signing, or do not parse
are skipped, and a key set holding none that is usable counts as a failed fetch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, final

import trio
from joserfc import jwk
from joserfc.errors import JoseError

from trimcp.transports.http import FetchError, fetch

from ._jose import has_private_members
from ._principal import InvalidToken, VerifierUnavailable

__all__ = [
    "DEFAULT_JWKS_MAX_BYTES",
    "DEFAULT_JWKS_MAX_KEYS",
    "DEFAULT_JWKS_MIN_REFETCH",
    "DEFAULT_JWKS_TIMEOUT",
    "DEFAULT_JWKS_TTL",
    "JwksCache",
]

logger = logging.getLogger("trimcp.auth")

DEFAULT_JWKS_TTL: Final = 300.0
"""Seconds a fetched key set is used before it is fetched again."""
DEFAULT_JWKS_MIN_REFETCH: Final = 30.0
"""Seconds between fetches caused by unknown key ids (or after a failed fetch)."""
DEFAULT_JWKS_TIMEOUT: Final = 5.0
"""Seconds one fetch may take."""
DEFAULT_JWKS_MAX_BYTES: Final = 64 * 1024
"""Bytes of key set read at most."""
DEFAULT_JWKS_MAX_KEYS: Final = 32
"""Keys kept from one key set at most."""

Key = jwk.RSAKey | jwk.ECKey | jwk.OKPKey | jwk.OctKey
#: Fetches the key set document (the bytes of a 200 answer); raises on failure.
Fetcher = Callable[[str], Awaitable[bytes]]


async def _fetch_jwks(url: str, *, timeout: float, max_bytes: int) -> bytes:
    response = await fetch(
        "GET", url, headers=[("Accept", "application/json")], timeout=timeout, max_bytes=max_bytes
    )
    if response.status != 200:
        raise FetchError(f"the key set answered HTTP {response.status}")
    return response.body


@final
class JwksCache:
    """The keys of one ``jwks_uri`` (see the module doc).

    Args:
      url: where the key set is (``jwks_uri`` of the authorization server's metadata).
      ttl: seconds a fetched key set is used before it is fetched again.
      min_refetch: seconds between fetches caused by unknown key ids (or after a
        failed fetch).
      timeout: seconds one fetch may take.
      max_bytes: bytes of key set read at most.
      max_keys: keys kept from one key set at most.
      fetcher: fetches the document (default: trimcp's HTTP client with the bounds);
        tests pass their own.
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float = DEFAULT_JWKS_TTL,
        min_refetch: float = DEFAULT_JWKS_MIN_REFETCH,
        timeout: float = DEFAULT_JWKS_TIMEOUT,
        max_bytes: int = DEFAULT_JWKS_MAX_BYTES,
        max_keys: int = DEFAULT_JWKS_MAX_KEYS,
        fetcher: Fetcher | None = None,
    ) -> None:
        if ttl <= 0 or min_refetch < 0 or timeout <= 0 or max_bytes <= 0 or max_keys <= 0:
            raise ValueError("the key set's bounds must be positive")
        self.url = url
        self.ttl = ttl
        self.min_refetch = min_refetch
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_keys = max_keys
        self._fetcher = fetcher
        self._keys: dict[str | None, Key] = {}
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._lock = trio.Lock()
        #: Fetches made so far (successful or not), for tests and metrics.
        self.fetches = 0

    @property
    def key_ids(self) -> list[str | None]:
        return list(self._keys)

    async def key(self, kid: str | None) -> Key:
        """The key a token names (``kid``; ``None`` works only for a single-key set).

        Raises :class:`InvalidToken` when the (fresh) set has no such key, and
        :class:`VerifierUnavailable` when no keys can be had.
        """
        now = trio.current_time()
        if self._fetched_at is None or now - self._fetched_at >= self.ttl:
            await self._refresh()
        else:
            await trio.lowlevel.checkpoint()  # a checkpoint on the cached path too
        found = self._find(kid)
        if found is None and self._may_refetch(trio.current_time()):
            await self._refresh()
            found = self._find(kid)
        if found is None:
            if not self._keys:
                raise VerifierUnavailable(
                    "the authorization server's keys are unavailable",
                    retry_after=max(1, round(self.min_refetch)),
                )
            raise InvalidToken("the token is signed with an unknown key")
        return found

    def _find(self, kid: str | None) -> Key | None:
        if kid is not None:
            return self._keys.get(kid)
        if len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return None

    def _may_refetch(self, now: float) -> bool:
        return self._attempted_at is None or now - self._attempted_at >= self.min_refetch

    async def _refresh(self) -> None:
        """Fetch the set (one fetch at a time, at most one per ``min_refetch``); keep
        the old keys when it fails."""
        started = trio.current_time()
        async with self._lock:
            if self._attempted_at is not None and self._attempted_at >= started:
                return  # another caller fetched while this one waited
            if not self._may_refetch(trio.current_time()):
                return
            self._attempted_at = trio.current_time()
            self.fetches += 1
            try:
                if self._fetcher is not None:
                    with trio.fail_after(self.timeout):
                        document = await self._fetcher(self.url)
                else:
                    document = await _fetch_jwks(
                        self.url, timeout=self.timeout, max_bytes=self.max_bytes
                    )
                if len(document) > self.max_bytes:
                    raise FetchError(f"the key set is larger than {self.max_bytes} bytes")
                keys = self._parse(document)
            except (FetchError, ValueError, trio.TooSlowError) as exc:
                # Held keys stay in use; the next attempt waits min_refetch.
                logger.warning("fetching the key set failed: %s", exc)
                return
            self._keys = keys
            self._fetched_at = trio.current_time()

    def _parse(self, document: bytes) -> dict[str | None, Key]:
        try:
            data: Any = json.loads(document)
        except ValueError:
            raise ValueError("the key set is not JSON") from None
        entries = data.get("keys") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ValueError("the key set has no keys list")
        keys: dict[str | None, Key] = {}
        for entry in entries[: self.max_keys]:
            if not isinstance(entry, dict) or has_private_members(entry):
                continue  # never a private (or symmetric) key from a public document
            if entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwk.import_key(entry)
            except (JoseError, ValueError, TypeError):
                continue
            kid = entry.get("kid")
            keys[kid if isinstance(kid, str) else None] = key
        if not keys:
            raise ValueError("the key set holds no usable signing key")
        return keys

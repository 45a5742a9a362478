"""Verifying opaque access tokens by asking the authorization server (RFC 7662).

:class:`IntrospectionVerifier` POSTs ``token=...`` to the introspection endpoint,
authenticating this resource server with HTTP Basic (``client_id``/``client_secret``),
and accepts the token only when the answer says ``"active": true``, its ``exp`` (when
given) is not past, and its ``iss`` equals ``issuer`` (when configured). Its ``aud``
must then name this resource (the :class:`~._resource.ResourceServer`'s check): an
answer without ``aud`` is refused, since the token might be meant for another resource
and accepting it would be token passthrough, unless ``assume_audience`` names the one
resource an authorization server that never says issues all its tokens for.

Positive answers are cached by a digest of the token (never the token itself) for
``cache_ttl`` seconds, and never past the token's ``exp``; the cache holds at most
``cache_size`` entries, dropping the oldest. A failing endpoint (unreachable, slow, an
HTTP error, an answer that is not a JSON object) makes verification unavailable: 503
with ``Retry-After``, never a verdict on the token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Final, final
from urllib.parse import quote, urlencode

import trio

from trimcp.transports.http import FetchedResponse, FetchError, fetch

from ._jwt import DEFAULT_LEEWAY, audiences, principal_from_claims
from ._principal import InvalidToken, Principal, VerifierUnavailable

__all__ = [
    "DEFAULT_INTROSPECTION_CACHE_SIZE",
    "DEFAULT_INTROSPECTION_CACHE_TTL",
    "IntrospectionVerifier",
]

logger = logging.getLogger("trimcp.auth")

DEFAULT_INTROSPECTION_CACHE_TTL: Final = 60.0
"""Seconds a positive introspection answer is reused."""
DEFAULT_INTROSPECTION_CACHE_SIZE: Final = 4096
"""Introspection answers cached at most."""
DEFAULT_INTROSPECTION_TIMEOUT: Final = 5.0
DEFAULT_INTROSPECTION_MAX_BYTES: Final = 64 * 1024

#: Posts the form body to the endpoint with the given headers; returns the response.
Poster = Callable[[str, bytes, list[tuple[str, str]]], Awaitable[FetchedResponse]]


@final
class IntrospectionVerifier:
    """Verifies tokens by introspection; see the module doc."""

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        assume_audience: str | None = None,
        leeway: int = DEFAULT_LEEWAY,
        timeout: float = DEFAULT_INTROSPECTION_TIMEOUT,
        max_bytes: int = DEFAULT_INTROSPECTION_MAX_BYTES,
        cache_ttl: float = DEFAULT_INTROSPECTION_CACHE_TTL,
        cache_size: int = DEFAULT_INTROSPECTION_CACHE_SIZE,
        retry_after: int = 5,
        poster: Poster | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if cache_size < 0 or cache_ttl < 0 or timeout <= 0:
            raise ValueError("the introspection bounds must not be negative")
        self.endpoint = endpoint
        self._client = (client_id, client_secret)
        self.issuer = issuer
        self.assume_audience = assume_audience
        self.leeway = leeway
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.cache_ttl = cache_ttl
        self.cache_size = cache_size
        self.retry_after = retry_after
        self._poster = poster
        self.clock = clock
        self._cache: OrderedDict[str, tuple[Principal, float]] = OrderedDict()
        #: Requests sent to the endpoint so far (for tests and metrics).
        self.requests = 0

    async def verify(self, token: str) -> Principal:
        key = hashlib.sha256(token.encode()).hexdigest()
        cached = self._cache.get(key)
        if cached is not None and cached[1] > trio.current_time():
            await trio.lowlevel.checkpoint()  # a checkpoint on the cached path too
            principal = cached[0]
        else:
            principal = await self._introspect(token)
            self._remember(key, principal)
        if principal.expires_at is not None and principal.expires_at + self.leeway < self.clock():
            self._cache.pop(key, None)
            raise InvalidToken("the token has expired")
        return principal

    def _remember(self, key: str, principal: Principal) -> None:
        if self.cache_size == 0 or self.cache_ttl == 0:
            return
        ttl = self.cache_ttl
        if principal.expires_at is not None:
            ttl = min(ttl, max(0.0, principal.expires_at - self.clock()))
        self._cache[key] = (principal, trio.current_time() + ttl)
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    async def _introspect(self, token: str) -> Principal:
        body = urlencode({"token": token, "token_type_hint": "access_token"}).encode()
        headers = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ]
        client_id, secret = self._client
        if client_id is not None:
            pair = f"{quote(client_id, safe='')}:{quote(secret or '', safe='')}"
            headers.append(("Authorization", "Basic " + base64.b64encode(pair.encode()).decode()))
        self.requests += 1
        try:
            with trio.fail_after(self.timeout):
                if self._poster is not None:
                    response = await self._poster(self.endpoint, body, headers)
                else:
                    response = await fetch(
                        "POST",
                        self.endpoint,
                        headers=headers,
                        body=body,
                        timeout=self.timeout,
                        max_bytes=self.max_bytes,
                    )
        except (FetchError, trio.TooSlowError) as exc:
            logger.warning("token introspection failed: %s", exc)
            raise self._unavailable() from None
        if response.status != 200:
            logger.warning("token introspection answered HTTP %d", response.status)
            raise self._unavailable()
        try:
            answer: Any = json.loads(response.body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            logger.warning("token introspection answered something other than a JSON object")
            raise self._unavailable()
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if self.issuer is not None and answer.get("iss", self.issuer) != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        audience = audiences(answer.get("aud"))
        if not audience and self.assume_audience is not None:
            audience = (self.assume_audience,)
        return principal_from_claims(answer, audience)

    def _unavailable(self) -> VerifierUnavailable:
        return VerifierUnavailable(
            "the token introspection endpoint is unavailable", retry_after=self.retry_after
        )

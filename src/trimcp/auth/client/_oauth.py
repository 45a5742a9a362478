"""``OAuth``: the client side of MCP authorization, as an HTTP transport's auth layer.

``open_client(streamable_http(url, auth=OAuth(AuthorizationCode(redirect=...))))``.
For each connection, :meth:`OAuth.attach` opens an :class:`OAuthSession` (the
transport's :class:`~trimcp.transports.http.HttpAuthSession`) that lives as long as
the connection and owns a nursery for the work challenges start.

Theory of operation
-------------------
* **Credentials.** Every request gets ``Authorization: Bearer <token>``, or, for a
  DPoP-bound token, ``Authorization: DPoP <token>`` and a fresh ``DPoP`` proof for the
  request (with the server's nonce when it gave one). A token that expires within
  ``refresh_margin`` seconds is refreshed first, when a refresh token is held.
* **Challenges** (``401``/``403`` with ``WWW-Authenticate``): a DPoP ``use_dpop_nonce``
  is answered by retrying with the nonce; a ``401`` by refreshing the token when
  possible, else by a full authorization: discovery (``_discovery``), then the
  configured grant; a ``403 insufficient_scope`` by a new authorization asking for the
  union of the scopes asked before and those the challenge names (step-up).
  A ``403`` of another kind is not an authorization matter.
* **Scopes** of a first authorization: the challenge's ``scope``, else every scope of the
  resource metadata's ``scopes_supported``, else none (the parameter is left out).
* **One flight.** Refreshes and authorizations run one at a time in the session's
  nursery; concurrent requests that need one wait for the same flight, then retry.
  A request that gives up meanwhile does not cancel it. Each flight is bounded by
  ``authorization_timeout``.
* **Bounds.** At most ``max_attempts`` authorizations in a row without a request
  succeeding in between (so a server that refuses forever gets ``max_attempts`` user
  prompts at most, then an :class:`AuthorizationError`); the transport separately bounds
  re-sends per request.
* **Issuers.** Tokens are kept per MCP endpoint with the issuer that made them;
  registrations per issuer. When the resource's authorization server changes, the old
  tokens are dropped and the client registers anew with the new server.

Nothing here logs or raises a token, a code, a verifier or a secret.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Literal, final

import trio

from trimcp.transports.http import HttpFetcher

from ._grants import Grant
from ._jose import DpopKey, NonceBook
from ._session import OAuthSession
from ._tokens import MemoryTokenStorage, TokenStorage

__all__ = ["DpopMode", "OAuth"]

DpopMode = Literal["auto"] | bool


@final
class OAuth:
    """The authorization layer for HTTP client transports (see the module doc).

    Args:
      grant: how tokens are obtained: :class:`AuthorizationCode` (a user),
        :class:`ClientCredentials`, :class:`JwtBearer`, :class:`EnterpriseManaged`.
      storage: where tokens and registrations are kept (default: in memory).
      dpop: ``"auto"`` binds tokens with DPoP (RFC 9449) when the authorization server
        supports ES256 proofs and the resource asks for DPoP (a ``DPoP`` challenge or
        ``dpop_bound_access_tokens_required``); ``True`` whenever the server supports
        it; ``False`` never.
      max_attempts: authorizations in a row without a success, at most (default 3).
      refresh_margin: seconds before expiry a token is refreshed (default 60).
      authorization_timeout: seconds one refresh or authorization may take, the user's
        step included (default 300).
      ssl_context: for ``https`` metadata and token requests.
      clock: Unix time (for tests).
    """

    def __init__(
        self,
        grant: Grant,
        *,
        storage: TokenStorage | None = None,
        dpop: DpopMode = "auto",
        max_attempts: int = 3,
        refresh_margin: float = 60.0,
        authorization_timeout: float = 300.0,
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.grant = grant
        self.storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self.dpop = dpop
        self.max_attempts = max_attempts
        self.refresh_margin = refresh_margin
        self.authorization_timeout = authorization_timeout
        self.ssl_context = ssl_context
        self.clock = clock
        self._dpop_key: DpopKey | None = None
        self.nonces = NonceBook()

    @property
    def dpop_key(self) -> DpopKey:
        """The client's DPoP key (made on first use, kept for this object's life)."""
        if self._dpop_key is None:
            self._dpop_key = DpopKey()
        return self._dpop_key

    @asynccontextmanager
    async def attach(self, url: str) -> AsyncIterator[OAuthSession]:
        """The session of one connection to ``url`` (see the module doc)."""
        fetcher = HttpFetcher(ssl_context=self.ssl_context)
        try:
            async with trio.open_nursery() as nursery:
                yield OAuthSession(self, url, nursery, fetcher)
                nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await fetcher.aclose()

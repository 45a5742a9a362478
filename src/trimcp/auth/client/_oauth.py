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

import base64
import json
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Final, Literal, final

import attrs
import trio

from trimcp.transports.http import (
    AuthorizationError,
    AuthResponse,
    HttpFetcher,
    HttpRequestInfo,
)

from ._challenge import Challenge, parse_challenges
from ._discovery import ResourceMetadata, ServerMetadata, discover_resource, discover_server
from ._grants import Grant, GrantContext
from ._jose import DPOP_ALG, DpopKey, NonceBook
from ._token_endpoint import Endpoint
from ._tokens import MemoryTokenStorage, Tokens, TokenStorage
from ._urls import origin_of

__all__ = ["OAuth", "OAuthSession"]

logger = logging.getLogger("trimcp.auth.client")

DpopMode = Literal["auto"] | bool
_INSUFFICIENT_SCOPE: Final = "insufficient_scope"


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


@final
class _Flight:
    __slots__ = ("done", "error")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.error: str | None = None


@final
@attrs.define
class _Bound:
    """What discovery found for the current authorization."""

    server: ServerMetadata
    resource: ResourceMetadata | None
    endpoint: Endpoint


@final
class OAuthSession:
    """One connection's authorization state (see the module doc)."""

    def __init__(self, oauth: OAuth, url: str, nursery: trio.Nursery, fetcher: HttpFetcher) -> None:
        self.oauth = oauth
        self.url = url
        self._nursery = nursery
        self.fetcher = fetcher
        self.tokens: Tokens | None = None
        self._loaded = False
        self.bound: _Bound | None = None
        self.requested: list[str] | None = None
        self.attempts = 0
        self.dpop_asked = False
        self._flight: _Flight | None = None
        #: Flights run so far (authorizations and refreshes; for tests and diagnostics).
        self.flights = 0
        #: Full authorizations run so far.
        self.authorizations = 0

    # ------------------------------------------------------------------ credentials
    async def headers(self, request: HttpRequestInfo) -> Sequence[tuple[str, str]]:
        tokens = await self._current()
        if tokens is None:
            return []
        if not tokens.dpop:
            return [("Authorization", f"Bearer {tokens.access_token}")]
        proof = self.oauth.dpop_key.proof(
            request.method,
            request.url,
            now=self.oauth.clock(),
            access_token=tokens.access_token,
            nonce=self.oauth.nonces.get(request.url),
        )
        return [("Authorization", f"DPoP {tokens.access_token}"), ("DPoP", proof)]

    async def _current(self) -> Tokens | None:
        """The token to send now: loaded, refreshed near expiry, or none."""
        if self._flight is not None:
            await self._flight.done.wait()
        if not self._loaded:
            self._loaded = True
            stored = await self.oauth.storage.get_tokens(self.url)
            if (
                stored is not None
                and stored.dpop
                and (stored.dpop_jkt != self.oauth.dpop_key.thumbprint)
            ):
                stored = None  # bound to a key this process does not hold
            self.tokens = stored
        tokens = self.tokens
        if tokens is None or tokens.expires_at is None:
            await trio.lowlevel.checkpoint()
            return tokens
        left = tokens.expires_at - self.oauth.clock()
        if left > self.oauth.refresh_margin:
            await trio.lowlevel.checkpoint()
            return tokens
        if tokens.refresh_token is not None:
            try:
                await self._fly(self._refresh)
            except AuthorizationError as exc:
                logger.info("token refresh failed: %s", exc)
            return self.tokens
        return tokens if left > 0 else None

    # ------------------------------------------------------------------ challenges
    async def challenged(
        self, request: HttpRequestInfo, sent: Sequence[tuple[str, str]], response: AuthResponse
    ) -> bool:
        await trio.lowlevel.checkpoint()
        challenges = parse_challenges(response.all("www-authenticate"))
        challenge = _pick(challenges)
        if any(c.scheme == "dpop" for c in challenges):
            self.dpop_asked = True
        if challenge is not None and challenge.error == "use_dpop_nonce":
            nonce = response.header("dpop-nonce")
            self.oauth.nonces.put(request.url, nonce)
            if nonce is not None and nonce != _proof_nonce(sent):
                return True  # the proof lacked this nonce (or a stale one): prove again
            raise AuthorizationError("the server asks for a DPoP nonce but sends no new one")
        if response.status not in (401, 403):
            return False
        if self._token_changed(sent):
            return True  # another request's flight got a new token meanwhile
        link = challenge.resource_metadata if challenge is not None else None
        if response.status == 403:
            if challenge is None or challenge.error != _INSUFFICIENT_SCOPE:
                return False
            wanted = _union(self.requested, challenge.scope)
            await self._fly(lambda: self._authorize(link, wanted))
            return True
        tokens = self.tokens
        if sent and tokens is not None and tokens.refresh_token is not None:
            try:
                await self._fly(self._refresh)
                return True
            except AuthorizationError as exc:
                logger.info("token refresh failed, authorizing anew: %s", exc)
        scopes = challenge.scope if challenge is not None else None
        await self._fly(lambda: self._authorize(link, scopes))
        return True

    def _token_changed(self, sent: Sequence[tuple[str, str]]) -> bool:
        tokens = self.tokens
        if tokens is None:
            return False
        current = f"{tokens.token_type} {tokens.access_token}"
        presented = [v for k, v in sent if k.lower() == "authorization"]
        return presented != [current]

    def observe(self, request: HttpRequestInfo, response: AuthResponse) -> None:
        if 200 <= response.status < 300:
            self.attempts = 0
        nonce = response.header("dpop-nonce")
        if nonce is not None:
            self.oauth.nonces.put(request.url, nonce)

    async def settled(self) -> bool:
        if self._flight is not None:
            await self._flight.done.wait()
        else:
            await trio.lowlevel.checkpoint()
        return self.flights > 0

    # ------------------------------------------------------------------ flights
    async def _fly(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` as the session's one flight, or wait for the running one."""
        flight = self._flight
        if flight is None:
            flight = self._flight = _Flight()
            self.flights += 1
            self._nursery.start_soon(self._run, flight, work)
        await flight.done.wait()
        if flight.error is not None:
            raise AuthorizationError(flight.error)

    async def _run(self, flight: _Flight, work: Callable[[], Awaitable[None]]) -> None:
        limit = self.oauth.authorization_timeout
        try:
            with trio.fail_after(limit):
                await work()
        except AuthorizationError as exc:
            flight.error = str(exc)
        except trio.TooSlowError:
            flight.error = f"authorization took longer than {limit:g} s"
        except Exception as exc:
            logger.error("authorization failed unexpectedly (%s)", type(exc).__name__)
            flight.error = f"authorization failed unexpectedly ({type(exc).__name__})"
        finally:
            self._flight = None
            flight.done.set()

    # ------------------------------------------------------------------ the work
    async def _bind(self, link: str | None) -> _Bound:
        """Discovery for a new authorization (see ``_discovery``)."""
        resource = await discover_resource(self.fetcher, self.url, link)
        issuer = resource.authorization_servers[0] if resource else origin_of(self.url)
        server = await discover_server(self.fetcher, issuer, legacy=resource is None)
        return _Bound(server, resource, self._endpoint(server, resource))

    def _endpoint(self, server: ServerMetadata, resource: ResourceMetadata | None) -> Endpoint:
        oauth = self.oauth
        algs = server.dpop_signing_alg_values_supported or ()
        wanted = oauth.dpop is True or (
            oauth.dpop == "auto"
            and (self.dpop_asked or (resource is not None and resource.dpop_required))
        )
        return Endpoint(
            fetcher=self.fetcher,
            server=server,
            resource=resource.resource if resource is not None else None,
            dpop=oauth.dpop_key if wanted and DPOP_ALG in algs else None,
            nonces=oauth.nonces,
            now=oauth.clock,
        )

    def _context(self, bound: _Bound, scopes: list[str] | None) -> GrantContext:
        return GrantContext(
            fetcher=self.fetcher,
            server=bound.server,
            endpoint=bound.endpoint,
            storage=self.oauth.storage,
            server_url=self.url,
            resource=bound.endpoint.resource,
            scopes=scopes,
        )

    async def _authorize(self, link: str | None, scopes: list[str] | None) -> None:
        self.attempts += 1
        if self.attempts > self.oauth.max_attempts:
            raise AuthorizationError(
                f"still refused after {self.oauth.max_attempts} authorizations in a row"
            )
        bound = await self._bind(link)
        previous = self.tokens
        if previous is not None and previous.issuer not in (None, bound.server.issuer):
            logger.info("the resource moved to another authorization server")
            await self._store(None)
        if scopes is None and bound.resource is not None and bound.resource.scopes_supported:
            scopes = list(bound.resource.scopes_supported)
        self.authorizations += 1
        tokens = await self.oauth.grant.obtain(self._context(bound, scopes))
        self.bound = bound
        self.requested = scopes
        await self._store(tokens)

    async def _refresh(self) -> None:
        tokens = self.tokens
        if tokens is None or tokens.refresh_token is None:
            raise AuthorizationError("no refresh token")
        try:
            bound = self.bound or await self._rebind(tokens)
            scopes = list(tokens.scope) if tokens.scope else None
            context = self._context(bound, scopes)
            client = await self.oauth.grant.refresh_client(context)
            document = await bound.endpoint.request(
                {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token},
                client=client,
            )
            fresh = bound.endpoint.tokens(document, scopes)
        except AuthorizationError:
            await self._store(None)
            raise
        if fresh.refresh_token is None:
            fresh = attrs.evolve(fresh, refresh_token=tokens.refresh_token)
        await self._store(fresh)

    async def _rebind(self, tokens: Tokens) -> _Bound:
        """Discovery for stored tokens (a new process): their issuer's metadata."""
        if tokens.issuer is None:
            raise AuthorizationError("the stored tokens do not name their issuer")
        server = await discover_server(self.fetcher, tokens.issuer, legacy=tokens.resource is None)
        resource = None
        if tokens.resource is not None:
            resource = ResourceMetadata(
                resource=tokens.resource,
                authorization_servers=(tokens.issuer,),
                dpop_required=tokens.dpop,
            )
        self.bound = _Bound(server, resource, self._endpoint(server, resource))
        return self.bound

    async def _store(self, tokens: Tokens | None) -> None:
        self.tokens = tokens
        self._loaded = True
        await self.oauth.storage.set_tokens(self.url, tokens)


def _pick(challenges: list[Challenge]) -> Challenge | None:
    """The challenge to act on: DPoP's, then Bearer's, then the first."""
    for scheme in ("dpop", "bearer"):
        for challenge in challenges:
            if challenge.scheme == scheme:
                return challenge
    return challenges[0] if challenges else None


def _proof_nonce(sent: Sequence[tuple[str, str]]) -> str | None:
    """The ``nonce`` claim of the DPoP proof among ``sent`` (our own; not verified)."""
    for name, value in sent:
        if name.lower() != "dpop":
            continue
        try:
            payload = value.split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (IndexError, ValueError):
            return None
        nonce = claims.get("nonce") if isinstance(claims, dict) else None
        return nonce if isinstance(nonce, str) else None
    return None


def _union(before: list[str] | None, asked: list[str] | None) -> list[str] | None:
    out = list(before or [])
    for scope in asked or []:
        if scope not in out:
            out.append(scope)
    return out or None

"""One connection's authorization state: the :class:`OAuthSession` that
``OAuth.attach`` yields (see ``_oauth`` for how it behaves)."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, final

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
from ._grants import GrantContext
from ._jose import DPOP_ALG
from ._token_endpoint import Endpoint
from ._tokens import Tokens
from ._urls import origin_of

if TYPE_CHECKING:
    from ._oauth import OAuth

__all__ = ["OAuthSession"]

logger = logging.getLogger("trimcp.auth.client")

_INSUFFICIENT_SCOPE: Final = "insufficient_scope"


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
        if 200 <= response.status < 300 or response.status == 101:  # 101: a WebSocket upgrade
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

"""The authorization code grant with PKCE (OAuth 2.1 §4.1), and client registration.

The user's step is pluggable: :attr:`AuthorizationCode.redirect` is called with the
authorization URL and returns the URL the authorization server redirected back to (a
browser and a local callback listener, a prompt where the user pastes it, a test, or a
headless fetch of the URL: see :func:`~._redirect.fetch_redirect`). It runs in the
connection's authorization task, never in the session's reader, and is bounded by
``OAuth(authorization_timeout=...)``.

The request carries ``state``, a PKCE S256 challenge (RFC 7636; verifier from
``secrets``), ``scope`` when any was chosen and ``resource`` (RFC 8707) when the server
published resource metadata. The answer is checked before its code is used: the
``state`` must match; ``iss`` (RFC 9207), when present, must equal the issuer as a
plain string, and must be present when the server advertises it.

The client id comes from, in order: ``client`` given by hand (for its issuer, or any);
a registration stored for this issuer; a client ID metadata document URL when the
server supports them; dynamic registration (RFC 7591) when it has an endpoint.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, final
from urllib.parse import parse_qs, urlencode, urlsplit

import attrs

from trimcp.transports.http import AuthorizationError, FetchError, is_loopback

from ._discovery import json_object
from ._grants import GrantContext
from ._token_endpoint import safe_text
from ._tokens import ClientInfo, Tokens
from ._urls import checked_url

__all__ = ["AuthorizationCode", "RedirectHandler", "pkce_pair", "s256"]

RedirectHandler = Callable[[str], Awaitable[str]]
"""``async (authorization_url) -> redirect_url``: the user's step of the flow."""

OFFLINE_ACCESS: Final = "offline_access"


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier`` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier (86 characters of ``secrets``) and its S256 challenge."""
    verifier = secrets.token_urlsafe(64)
    return verifier, s256(verifier)


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    return values[0] if values else None


@final
@attrs.frozen(kw_only=True)
class AuthorizationCode:
    """The interactive grant (see the module doc)."""

    redirect: RedirectHandler
    redirect_uri: str = "http://127.0.0.1:33418/callback"
    client_name: str = "trimcp"
    client: ClientInfo | None = None
    """Credentials registered by hand (pre-registration)."""
    client_metadata_url: str | None = None
    """An ``https`` URL serving this client's metadata document, used as its client id
    where the authorization server supports client ID metadata documents."""
    offline_access: bool = True
    """Ask for ``offline_access`` (a refresh token) when the server lists that scope."""
    application_type: Literal["native", "web"] | None = None
    """For registration; default: ``native`` for a loopback or custom-scheme redirect."""

    # ------------------------------------------------------------------ clients
    async def refresh_client(self, context: GrantContext) -> ClientInfo | None:
        return await self._registration(context)

    async def _registration(self, context: GrantContext) -> ClientInfo:
        issuer = context.server.issuer
        if self.client is not None and self.client.issuer in (None, issuer):
            return self.client
        stored = await context.storage.get_client(issuer)
        if stored is not None:
            return stored
        server = context.server
        if server.client_id_metadata_document_supported and self.client_metadata_url:
            return ClientInfo(client_id=self.client_metadata_url, token_endpoint_auth_method="none")
        if server.registration_endpoint is None:
            raise AuthorizationError(
                "the authorization server offers no registration; pass "
                "client=ClientInfo(...) with credentials registered for it"
            )
        registered = await self._register(context, server.registration_endpoint)
        await context.storage.set_client(issuer, registered)
        return registered

    def _kind(self) -> str:
        if self.application_type is not None:
            return self.application_type
        parts = urlsplit(self.redirect_uri)
        native = parts.scheme not in ("http", "https") or is_loopback(parts.hostname)
        return "native" if native else "web"

    async def _register(self, context: GrantContext, url: str) -> ClientInfo:
        server = context.server
        supported = server.token_endpoint_auth_methods_supported
        if supported is None:
            method = "client_secret_basic"
        elif "none" in supported:
            method = "none"
        else:
            method = next(
                (m for m in ("client_secret_basic", "client_secret_post") if m in supported),
                supported[0] if supported else "none",
            )
        grants = ["authorization_code"]
        if server.grant_types_supported is None or "refresh_token" in server.grant_types_supported:
            grants.append("refresh_token")
        document = {
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": grants,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self._kind(),
        }
        try:
            response = await context.fetcher.request(
                "POST",
                url,
                [("Content-Type", "application/json"), ("Accept", "application/json")],
                json.dumps(document).encode(),
            )
        except FetchError as exc:
            raise AuthorizationError(f"cannot reach the registration endpoint: {exc}") from None
        answer = json_object(response) or {}
        client_id = answer.get("client_id")
        if response.status not in (200, 201) or not isinstance(client_id, str) or not client_id:
            error = safe_text(answer.get("error"), 64)
            raise AuthorizationError(
                f"dynamic client registration failed (HTTP {response.status}"
                + (f", {error}" if error else "")
                + ")"
            )
        secret = answer.get("client_secret")
        granted = answer.get("token_endpoint_auth_method")
        return ClientInfo(
            client_id=client_id,
            client_secret=secret if isinstance(secret, str) and secret else None,
            token_endpoint_auth_method=granted if isinstance(granted, str) else None,
            issuer=server.issuer,
        )

    # ------------------------------------------------------------------ the flow
    def scopes(self, context: GrantContext) -> list[str] | None:
        chosen = list(context.scopes or [])
        listed = context.server.scopes_supported or ()
        if self.offline_access and OFFLINE_ACCESS in listed and OFFLINE_ACCESS not in chosen:
            chosen.append(OFFLINE_ACCESS)
        return chosen or None

    async def obtain(self, context: GrantContext) -> Tokens:
        server = context.server
        if server.authorization_endpoint is None:
            raise AuthorizationError("the authorization server has no authorization endpoint")
        methods = server.code_challenge_methods_supported
        if server.discovered and (methods is None or "S256" not in methods):
            raise AuthorizationError("the authorization server does not support PKCE with S256")
        client = await self._registration(context)
        scopes = self.scopes(context)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        query: dict[str, str] = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if scopes:
            query["scope"] = " ".join(scopes)
        if context.resource is not None:
            query["resource"] = context.resource
        endpoint = checked_url(server.authorization_endpoint, "authorization endpoint")
        joiner = "&" if urlsplit(endpoint).query else "?"
        landed = await self.redirect(endpoint + joiner + urlencode(query))
        code = self._code(landed, state, context)
        document = await context.endpoint.request(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect_uri,
                "code_verifier": verifier,
            },
            client=client,
        )
        return context.endpoint.tokens(document, scopes)

    def _code(self, landed: object, state: str, context: GrantContext) -> str:
        """The code of the authorization response at ``landed`` (see the module doc)."""
        if not isinstance(landed, str):
            raise AuthorizationError("the redirect handler returned no URL")
        parts = urlsplit(landed)
        params: dict[str, Any] = parse_qs(parts.query or parts.fragment, keep_blank_values=True)
        if _one(params, "state") != state:
            raise AuthorizationError("the authorization response does not carry our state")
        server = context.server
        iss = _one(params, "iss")
        if iss is not None and iss != server.issuer:
            raise AuthorizationError(
                "the authorization response comes from another issuer (iss mismatch)"
            )
        if iss is None and server.iss_parameter_supported:
            raise AuthorizationError(
                "the authorization response lacks the iss parameter its server advertises"
            )
        error = _one(params, "error")
        if error is not None:
            detail = safe_text(_one(params, "error_description"))
            raise AuthorizationError(
                f"the authorization was refused ({safe_text(error, 64)}"
                + (f": {detail}" if detail else "")
                + ")"
            )
        code = _one(params, "code")
        if not code:
            raise AuthorizationError("the authorization response carries no code")
        return code

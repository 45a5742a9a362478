"""Requests to an authorization server's token endpoint (OAuth 2.1 §3.2, RFC 9449 §5).

One form POST per grant, with the client authenticated as the server supports:
``client_secret_basic`` (RFC 6749 §2.3.1: id and secret form-encoded, then Basic; the
id is in the form too, as every method has it),
``client_secret_post``, ``private_key_jwt`` (RFC 7523 assertion) or ``none`` (the
client id in the form). With a DPoP key the request carries a proof; a
``use_dpop_nonce`` refusal is answered once more with the server's nonce (RFC 9449 §8)
and is the only retry: a refused grant is reported, never repeated or swapped for
another. The error a caller sees quotes the server's ``error`` code and a bounded,
printable excerpt of its description; never a token, code, verifier or secret.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from typing import Any, Final, final
from urllib.parse import quote, urlencode

import attrs

from trimcp.transports.http import AuthorizationError, FetchError, HttpFetcher

from ._discovery import ServerMetadata, json_object
from ._jose import DpopKey, NonceBook, SigningKey, client_assertion
from ._tokens import ClientInfo, Tokens

__all__ = ["Endpoint", "auth_method", "safe_text"]

ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def safe_text(value: object, limit: int = 200) -> str:
    """A server-supplied string fit for an error message (printable, bounded)."""
    text = value if isinstance(value, str) else ""
    return "".join(c for c in text[:limit] if c.isprintable())


def auth_method(client: ClientInfo, server: ServerMetadata) -> str:
    """How ``client`` authenticates at ``server``'s token endpoint."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    supported = server.token_endpoint_auth_methods_supported or ("client_secret_basic",)
    if client.client_secret is not None:
        for method in ("client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
    return "none" if "none" in supported or client.client_secret is None else supported[0]


@final
@attrs.frozen(kw_only=True)
class Endpoint:
    """A token endpoint and how to call it."""

    fetcher: HttpFetcher
    server: ServerMetadata
    resource: str | None
    dpop: DpopKey | None
    nonces: NonceBook
    now: Callable[[], float]

    def _authenticate(
        self,
        form: dict[str, str],
        headers: list[tuple[str, str]],
        client: ClientInfo | None,
        assertion_key: tuple[SigningKey, str] | None,
    ) -> None:
        if client is None:
            return
        if assertion_key is not None:
            key, algorithm = assertion_key
            form["client_id"] = client.client_id
            form["client_assertion_type"] = ASSERTION_TYPE
            audience = self.server.issuer if self.server.discovered else self.server.token_endpoint
            form["client_assertion"] = client_assertion(
                client.client_id, audience, key, algorithm, now=self.now()
            )
            return
        method = auth_method(client, self.server)
        secret = client.client_secret
        # The id goes in the form whatever the method (RFC 6749 §3.2.1 allows it; some
        # servers, the official Python SDK's among them, look the client up by it).
        form["client_id"] = client.client_id
        if method == "client_secret_basic" and secret is not None:
            pair = f"{quote(client.client_id, safe='')}:{quote(secret, safe='')}"
            headers.append(("Authorization", "Basic " + base64.b64encode(pair.encode()).decode()))
        elif method == "client_secret_post" and secret is not None:
            form["client_secret"] = secret

    async def request(
        self,
        grant: Mapping[str, str],
        *,
        client: ClientInfo | None = None,
        assertion_key: tuple[SigningKey, str] | None = None,
        scopes: list[str] | None = None,
        url: str | None = None,
    ) -> dict[str, Any]:
        """POST ``grant`` (plus resource, scope, client authentication); the JSON answer.

        ``url`` overrides the endpoint (an identity provider's, for token exchange).
        """
        endpoint = url or self.server.token_endpoint
        form = dict(grant)
        if self.resource is not None and "resource" not in form:
            form["resource"] = self.resource
        if scopes:
            form["scope"] = " ".join(scopes)
        base = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ]
        self._authenticate(form, base, client, assertion_key)
        body = urlencode(form).encode("ascii")
        for attempt in (0, 1):
            headers = list(base)
            if self.dpop is not None:
                proof = self.dpop.proof(
                    "POST", endpoint, now=self.now(), nonce=self.nonces.get(endpoint)
                )
                headers.append(("DPoP", proof))
            try:
                response = await self.fetcher.request("POST", endpoint, headers, body)
            except FetchError as exc:
                raise AuthorizationError(f"cannot reach the token endpoint: {exc}") from None
            fresh = self.nonces.put(endpoint, response.header("dpop-nonce"))
            document = json_object(response) or {}
            if response.status == 200 and document:
                return document
            error = safe_text(document.get("error"), 64)
            if error == "use_dpop_nonce" and fresh and attempt == 0 and self.dpop is not None:
                continue
            detail = safe_text(document.get("error_description"))
            raise AuthorizationError(
                f"the token endpoint refused the {safe_text(grant.get('grant_type'), 80)} "
                f"grant (HTTP {response.status}"
                + (f", {error}" if error else "")
                + (f": {detail}" if detail else "")
                + ")"
            )
        raise AssertionError("unreachable")  # pragma: no cover

    async def grant(
        self,
        form: Mapping[str, str],
        *,
        client: ClientInfo | None,
        scopes: list[str] | None,
        assertion_key: tuple[SigningKey, str] | None = None,
    ) -> Tokens:
        """Request ``form``'s grant asking for ``scopes``; the tokens it gives."""
        document = await self.request(
            form, client=client, assertion_key=assertion_key, scopes=scopes
        )
        return self.tokens(document, scopes)

    def tokens(self, document: dict[str, Any], asked: list[str] | None) -> Tokens:
        """:class:`Tokens` from a token response (RFC 6749 §5.1)."""
        access = document.get("access_token")
        kind = document.get("token_type")
        if not isinstance(access, str) or not access or not isinstance(kind, str):
            raise AuthorizationError("the token endpoint answered without an access token")
        if kind.lower() not in ("bearer", "dpop"):
            raise AuthorizationError(f"unsupported token type {safe_text(kind, 40)!r}")
        if kind.lower() == "dpop" and self.dpop is None:
            raise AuthorizationError("the token endpoint issued a DPoP token unasked")
        lifetime = document.get("expires_in")
        expires_at = None
        if isinstance(lifetime, int | float) and math.isfinite(lifetime) and lifetime > 0:
            expires_at = self.now() + float(lifetime)
        scope = document.get("scope")
        refresh = document.get("refresh_token")
        return Tokens(
            access_token=access,
            token_type="DPoP" if kind.lower() == "dpop" else "Bearer",
            expires_at=expires_at,
            refresh_token=refresh if isinstance(refresh, str) and refresh else None,
            scope=tuple(s for s in scope.split(" ") if s)
            if isinstance(scope, str)
            else (tuple(asked) if asked is not None else None),
            issuer=self.server.issuer,
            resource=self.resource,
            dpop_jkt=self.dpop.thumbprint if kind.lower() == "dpop" and self.dpop else None,
        )

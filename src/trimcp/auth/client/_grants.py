"""How a token is obtained once discovery is done: the grants a client can use.

A grant gets a :class:`GrantContext` (the authorization server's metadata, its token
endpoint, the resource and the scopes chosen for this authorization) and returns
:class:`~._tokens.Tokens`. The interactive one, :class:`~._authcode.AuthorizationCode`,
lives in its own module; the machine-to-machine ones are here:

* :class:`ClientCredentials`: ``client_credentials`` with a client secret (Basic or
  form, as the server supports) or a signed JWT assertion (``private_key_jwt``);
* :class:`JwtBearer`: the RFC 7523 JWT-bearer grant with an assertion the workload
  already holds (workload identity federation);
* :class:`EnterpriseManaged`: enterprise-managed authorization, an RFC 8693 token
  exchange at the identity provider (ID token for an identity assertion grant, ID-JAG)
  followed by the JWT-bearer grant at the authorization server.

None of them retries a refused grant or falls back to another one.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Final, Protocol, final

import attrs

from trimcp.transports.http import AuthorizationError, HttpFetcher

from ._discovery import ServerMetadata
from ._jose import SigningKey, load_signing_key
from ._token_endpoint import Endpoint, safe_text
from ._tokens import ClientInfo, Tokens, TokenStorage
from ._urls import checked_url

__all__ = [
    "ClientCredentials",
    "EnterpriseManaged",
    "Grant",
    "GrantContext",
    "JwtBearer",
    "Secret",
]

JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"

Secret = str | Callable[[], Awaitable[str] | str]
"""A credential given as is, or a callable that fetches it when needed (fresh each time)."""


async def reveal(value: Secret) -> str:
    got = value() if callable(value) else value
    got = await got if inspect.isawaitable(got) else got
    if not isinstance(got, str) or not got:
        raise AuthorizationError("the configured assertion is empty")
    return got


@final
@attrs.frozen(kw_only=True)
class GrantContext:
    """What a grant works with (see the module doc)."""

    fetcher: HttpFetcher
    server: ServerMetadata
    endpoint: Endpoint
    storage: TokenStorage
    server_url: str
    """The MCP endpoint being authorized for."""
    resource: str | None
    """The RFC 8707 resource to name (``None`` for a 2025-03-26 server)."""
    scopes: list[str] | None
    """The scopes chosen for this authorization (``None``: ask for none)."""


class Grant(Protocol):
    """A way to obtain tokens (see the module doc)."""

    async def obtain(self, context: GrantContext) -> Tokens:
        """New tokens for ``context`` (raises :class:`AuthorizationError`)."""
        ...

    async def refresh_client(self, context: GrantContext) -> ClientInfo | None:
        """The client that refreshes tokens this grant obtained (``None``: none)."""
        ...


def _signing_key(value: str | bytes | SigningKey | None) -> SigningKey | None:
    return None if value is None else load_signing_key(value)


@final
@attrs.frozen(kw_only=True)
class ClientCredentials:
    """The ``client_credentials`` grant (a client acting for itself)."""

    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    private_key: SigningKey | None = attrs.field(default=None, repr=False, converter=_signing_key)
    """PEM (or a joserfc key) to sign a ``private_key_jwt`` assertion with, instead of
    sending a secret."""
    signing_algorithm: str = "ES256"

    async def refresh_client(self, context: GrantContext) -> ClientInfo | None:
        return ClientInfo(client_id=self.client_id, client_secret=self.client_secret)

    async def obtain(self, context: GrantContext) -> Tokens:
        key = self.private_key
        return await context.endpoint.grant(
            {"grant_type": "client_credentials"},
            client=await self.refresh_client(context),
            scopes=context.scopes,
            assertion_key=None if key is None else (key, self.signing_algorithm),
        )


@final
@attrs.frozen(kw_only=True)
class JwtBearer:
    """The JWT-bearer grant (RFC 7523 §2.1) with an assertion the client holds."""

    assertion: Secret = attrs.field(repr=False)
    client_id: str | None = None
    client_secret: str | None = attrs.field(default=None, repr=False)

    async def refresh_client(self, context: GrantContext) -> ClientInfo | None:
        if self.client_id is None:
            return None
        return ClientInfo(client_id=self.client_id, client_secret=self.client_secret)

    async def obtain(self, context: GrantContext) -> Tokens:
        return await context.endpoint.grant(
            {"grant_type": JWT_BEARER, "assertion": await reveal(self.assertion)},
            client=await self.refresh_client(context),
            scopes=context.scopes,
        )


@final
@attrs.frozen(kw_only=True)
class EnterpriseManaged:
    """Enterprise-managed authorization (see the module doc)."""

    id_token: Secret = attrs.field(repr=False)
    """The user's ID token from the enterprise identity provider."""
    idp_token_endpoint: str
    idp_client_id: str
    client_id: str
    """The client's id at the MCP server's authorization server."""
    client_secret: str | None = attrs.field(default=None, repr=False)
    idp_client_secret: str | None = attrs.field(default=None, repr=False)

    async def refresh_client(self, context: GrantContext) -> ClientInfo | None:
        return ClientInfo(client_id=self.client_id, client_secret=self.client_secret)

    async def _exchange(self, context: GrantContext) -> str:
        endpoint = checked_url(self.idp_token_endpoint, "identity provider token endpoint")
        idp = attrs.evolve(context.endpoint, dpop=None)
        method = "client_secret_post" if self.idp_client_secret else "none"
        document = await idp.request(
            {
                "grant_type": TOKEN_EXCHANGE,
                "requested_token_type": ID_JAG,
                "subject_token": await reveal(self.id_token),
                "subject_token_type": ID_TOKEN,
                "audience": context.server.issuer,
                "resource": context.resource or context.server_url,
            },
            client=ClientInfo(
                client_id=self.idp_client_id,
                client_secret=self.idp_client_secret,
                token_endpoint_auth_method=method,
            ),
            scopes=context.scopes,
            url=endpoint,
        )
        grant = document.get("access_token")
        kind = document.get("issued_token_type")
        if not isinstance(grant, str) or not grant or kind != ID_JAG:
            raise AuthorizationError(
                "the identity provider did not issue an identity assertion grant "
                f"(issued_token_type {safe_text(kind, 80)!r})"
            )
        return grant

    async def obtain(self, context: GrantContext) -> Tokens:
        return await context.endpoint.grant(
            {"grant_type": JWT_BEARER, "assertion": await self._exchange(context)},
            client=await self.refresh_client(context),
            scopes=context.scopes,
        )

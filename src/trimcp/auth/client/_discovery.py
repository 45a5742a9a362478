"""Discovery: protected resource metadata (RFC 9728), then authorization server metadata
(RFC 8414, OpenID Connect Discovery), as the MCP authorization spec orders them.

* The resource's metadata comes from the ``resource_metadata`` link of its challenge,
  else from the path-based well-known URL, else the root one (the first that answers
  ``200`` with a document wins; a link that answers ``404`` falls back to the well-known
  URLs). Its ``resource`` must be this server or a parent path of it on the same origin,
  or nothing is authorized (RFC 9728 §3.3): a server cannot borrow another's tokens.
* The authorization server's metadata is looked for at the RFC 8414 URL, then the OpenID
  ones (path-inserted, then path-appended when the issuer has a path). Its ``issuer``
  must be the issuer the URL was built from, compared as strings; a mismatch stops the
  flow, it is never a reason to try elsewhere.
* A server with no resource metadata at all is a 2025-03-26 one: its origin is the
  authorization server; without metadata there either, the endpoints are ``/authorize``,
  ``/token`` and ``/register`` at that origin.

Documents are JSON objects of at most 64 KiB; every URL in them passes
:func:`~._urls.checked_url` before use.
"""

from __future__ import annotations

import json
from typing import Any, Final, final

import attrs

from trimcp.transports.http import AuthorizationError, FetchedResponse, FetchError, HttpFetcher

from ._urls import (
    authorization_server_urls,
    checked_url,
    origin_of,
    protected_resource_urls,
    resource_matches,
)

__all__ = ["ResourceMetadata", "ServerMetadata", "discover_resource", "discover_server"]

MAX_DOCUMENT: Final = 64 * 1024


@final
@attrs.frozen(kw_only=True)
class ResourceMetadata:
    """What the protected resource says of itself (RFC 9728)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    dpop_required: bool = False
    url: str = ""


@final
@attrs.frozen(kw_only=True)
class ServerMetadata:
    """What the client uses of an authorization server's metadata (RFC 8414)."""

    issuer: str
    token_endpoint: str
    authorization_endpoint: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    discovered: bool = True
    """False for the 2025-03-26 default endpoints (no metadata document)."""


def json_object(response: FetchedResponse) -> dict[str, Any] | None:
    """The body as a JSON object, or ``None``."""
    if len(response.body) > MAX_DOCUMENT:
        return None
    try:
        value = json.loads(response.body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if isinstance(v, str))


async def _get(fetcher: HttpFetcher, url: str, what: str) -> FetchedResponse:
    try:
        return await fetcher.request("GET", url, [("Accept", "application/json")])
    except FetchError as exc:
        raise AuthorizationError(f"cannot fetch the {what}: {exc}") from None


async def discover_resource(
    fetcher: HttpFetcher, server_url: str, link: str | None
) -> ResourceMetadata | None:
    """The resource's metadata, or ``None`` when it publishes none (see the module doc)."""
    urls = protected_resource_urls(server_url)
    if link is not None:
        urls = [checked_url(link, "resource metadata"), *(u for u in urls if u != link)]
    for url in urls:
        response = await _get(fetcher, url, "protected resource metadata")
        document = json_object(response) if response.status == 200 else None
        if document is None:
            if url == link and response.status != 404:
                raise AuthorizationError(
                    f"the protected resource metadata answered HTTP {response.status}"
                )
            continue
        return _resource_metadata(document, server_url, url)
    return None


def _resource_metadata(document: dict[str, Any], server_url: str, url: str) -> ResourceMetadata:
    resource = document.get("resource")
    if not isinstance(resource, str) or not resource_matches(resource, server_url):
        raise AuthorizationError(
            "the protected resource metadata names another resource than this server"
        )
    servers = _strings(document.get("authorization_servers")) or ()
    if not servers:
        raise AuthorizationError("the protected resource metadata names no authorization server")
    return ResourceMetadata(
        resource=resource,
        authorization_servers=tuple(servers),
        scopes_supported=_strings(document.get("scopes_supported")),
        dpop_required=document.get("dpop_bound_access_tokens_required") is True,
        url=url,
    )


async def discover_server(fetcher: HttpFetcher, issuer: str, *, legacy: bool) -> ServerMetadata:
    """The metadata of authorization server ``issuer`` (see the module doc).

    ``legacy``: the resource published no metadata (2025-03-26), so default endpoints
    stand in for a missing document.
    """
    checked_url(issuer, "authorization server")
    for url in authorization_server_urls(issuer):
        response = await _get(fetcher, url, "authorization server metadata")
        document = json_object(response) if response.status == 200 else None
        if document is not None:
            return _server_metadata(document, issuer)
    if not legacy:
        raise AuthorizationError(f"the authorization server {issuer} publishes no metadata")
    origin = origin_of(issuer)
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=f"{origin}/authorize",
        token_endpoint=f"{origin}/token",
        registration_endpoint=f"{origin}/register",
        discovered=False,
    )


def _endpoint(document: dict[str, Any], name: str) -> str | None:
    value = document.get(name)
    return None if value is None else checked_url(value, name.replace("_", " "))


def _server_metadata(document: dict[str, Any], issuer: str) -> ServerMetadata:
    if document.get("issuer") != issuer:
        raise AuthorizationError(
            "the authorization server metadata names another issuer than the one it was "
            "fetched for; it is not used"
        )
    token_endpoint = _endpoint(document, "token_endpoint")
    if token_endpoint is None:
        raise AuthorizationError("the authorization server metadata has no token endpoint")
    return ServerMetadata(
        issuer=issuer,
        token_endpoint=token_endpoint,
        authorization_endpoint=_endpoint(document, "authorization_endpoint"),
        registration_endpoint=_endpoint(document, "registration_endpoint"),
        scopes_supported=_strings(document.get("scopes_supported")),
        grant_types_supported=_strings(document.get("grant_types_supported")),
        token_endpoint_auth_methods_supported=_strings(
            document.get("token_endpoint_auth_methods_supported")
        ),
        code_challenge_methods_supported=_strings(document.get("code_challenge_methods_supported")),
        iss_parameter_supported=document.get("authorization_response_iss_parameter_supported")
        is True,
        client_id_metadata_document_supported=document.get("client_id_metadata_document_supported")
        is True,
        dpop_signing_alg_values_supported=_strings(
            document.get("dpop_signing_alg_values_supported")
        ),
    )

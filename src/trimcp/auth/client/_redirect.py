"""A headless user step: fetch the authorization URL and take the redirect it answers.

For an authorization server that decides without a user (a test server, a trusted
automated setup, the conformance harness), :func:`fetch_redirect` is a ready
:data:`~._authcode.RedirectHandler`: it GETs the authorization URL with trimcp's own
HTTP client, follows nothing, and returns the ``Location`` of the ``3xx`` answer. The
URL must pass the same scheme policy as every other server-supplied URL.
"""

from __future__ import annotations

import ssl
from urllib.parse import urljoin

from trimcp.transports.http import AuthorizationError, FetchError, HttpFetcher

from ._urls import checked_url

__all__ = ["fetch_redirect"]


async def fetch_redirect(
    authorization_url: str, *, ssl_context: ssl.SSLContext | None = None
) -> str:
    """The URL the authorization endpoint redirects ``authorization_url`` to."""
    checked_url(authorization_url, "authorization")
    fetcher = HttpFetcher(ssl_context=ssl_context, max_origins=1)
    try:
        response = await fetcher.request("GET", authorization_url)
    except FetchError as exc:
        raise AuthorizationError(f"cannot reach the authorization endpoint: {exc}") from None
    finally:
        await fetcher.aclose()
    location = response.header("location")
    if not 300 <= response.status < 400 or not location:
        raise AuthorizationError(
            f"the authorization endpoint answered HTTP {response.status}, not a redirect"
        )
    return urljoin(authorization_url, location)

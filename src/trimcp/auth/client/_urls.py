"""URLs an authorization flow may use, and the well-known locations it derives.

Every URL a server supplies (a ``resource_metadata`` link, an authorization server, an
endpoint in its metadata) is checked by :func:`checked_url` before anything is sent to
it or shown to the user: ``https``, or ``http`` on a loopback host only (``localhost``,
``127.0.0.0/8``, ``::1``), with no credentials and no fragment. So a hostile server can
neither make the client send secrets in clear over the network nor hand the user a
``javascript:`` or ``file:`` link. Nothing here ever runs a shell or a browser.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from trimcp.transports.http import AuthorizationError, is_loopback

__all__ = [
    "authorization_server_urls",
    "checked_url",
    "is_allowed_url",
    "origin_of",
    "protected_resource_urls",
    "resource_matches",
    "without_query",
]

_MAX_URL = 4096


def is_allowed_url(url: str) -> bool:
    """Whether ``url`` passes the policy of the module doc."""
    if not isinstance(url, str) or len(url) > _MAX_URL:
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return False
    if parts.username is not None or parts.password is not None or parts.fragment:
        return False
    if not parts.hostname or any(c.isspace() or ord(c) < 0x20 for c in url):
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and is_loopback(parts.hostname)


def checked_url(url: object, what: str) -> str:
    """``url`` if it passes :func:`is_allowed_url`; else :class:`AuthorizationError`."""
    if not isinstance(url, str) or not is_allowed_url(url):
        raise AuthorizationError(
            f"refusing the {what} URL: it must be https, or http on a loopback host"
        )
    return url


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, as written (no trailing slash)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def without_query(url: str) -> str:
    """``url`` without query and fragment (a DPoP ``htu``)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _path(url: str) -> str:
    path = urlsplit(url).path
    return "" if path == "/" else path.rstrip("/") if path.endswith("/") else path


def protected_resource_urls(resource_url: str) -> list[str]:
    """RFC 9728 §3.1 locations for the server at ``resource_url``: path-based, then root."""
    origin = origin_of(resource_url)
    path = _path(resource_url)
    root = f"{origin}/.well-known/oauth-protected-resource"
    return [f"{root}{path}", root] if path else [root]


def authorization_server_urls(issuer: str) -> list[str]:
    """RFC 8414 §3.1 and OpenID Connect Discovery locations for ``issuer``, in order."""
    origin = origin_of(issuer)
    path = _path(issuer)
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _key(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether protected resource metadata naming ``resource`` may speak for the server
    at ``server_url``: the same origin, and a path that is the server's or a parent of it
    (RFC 9728 §3.3; RFC 8707 resource identifiers)."""
    try:
        if _key(resource) != _key(server_url):
            return False
    except ValueError:
        return False
    parts = urlsplit(resource)
    if parts.query or parts.fragment:
        return False
    mine = _path(resource)
    theirs = _path(server_url)
    return not mine or theirs == mine or theirs.startswith(mine + "/")

"""The URLs a resource server reasons about: its resource identifier, its metadata
URL, and the comparisons of RFC 8707 audiences and RFC 9449 ``htu`` values.

URLs compare after normalization (RFC 3986 §6.2.2-3): scheme and host lower-case, the
default port dropped, an empty path as ``/``, a trailing ``/`` ignored; query and
fragment never take part.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

__all__ = [
    "WELL_KNOWN_RESOURCE",
    "metadata_path",
    "metadata_url",
    "normalize_url",
    "same_resource",
    "url_for",
]

WELL_KNOWN_RESOURCE: Final = "/.well-known/oauth-protected-resource"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def normalize_url(url: str) -> str | None:
    """The comparable form of an absolute http(s) URL, or ``None`` if it is not one."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    authority = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path.rstrip("/") or "/"
    return f"{scheme}://{authority}{path}"


def same_resource(a: str, b: str) -> bool:
    """Whether two audiences name the same resource: http(s) URLs after normalization,
    anything else (a URN) compared exactly."""
    left, right = normalize_url(a), normalize_url(b)
    if left is None or right is None:
        return a == b
    return left == right


def url_for(scheme: str, host: str, port: int | None, path: str) -> str:
    """``scheme://host[:port]path`` with an IPv6 host in brackets, the default port left out."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}{path}"
    return f"{scheme}://{host}:{port}{path}"


def metadata_path(resource_path: str) -> str:
    """The path-aware well-known path of a resource's metadata (RFC 9728 §3.1)."""
    suffix = resource_path.rstrip("/")
    return WELL_KNOWN_RESOURCE + suffix


def metadata_url(resource: str) -> str:
    """The URL of the protected resource metadata of ``resource``."""
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}{metadata_path(parts.path)}"

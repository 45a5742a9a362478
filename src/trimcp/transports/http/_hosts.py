"""The DNS-rebinding guard: strict ``Host`` and ``Origin`` parsing and the policy that judges them.

A DNS-rebinding page makes a browser send requests to this server under the attacker's
own name: ``Host: attacker.example`` and, when it runs script, ``Origin:
http://attacker.example``. The guard accepts a request only when both name this server:

* **reached on loopback** (the request arrived on a loopback address, or the policy says
  the server is bound to loopback): ``Host`` must be ``localhost``, ``127.0.0.1`` or
  ``[::1]`` (any port), or an allowed host;
* **reached on another address** (a ``0.0.0.0`` or public bind): ``Host`` must be an
  allowed host, or an IP literal. An IP literal is never a rebinding vector: a page
  served from an IP address is same-origin with nothing but that address. Names must be
  listed (``allowed_hosts``, ``trimcp serve --allow-host``); ``"*"`` accepts any
  ``Host`` and leaves ``Origin`` as the only check (an explicit opt-out).

A present ``Origin`` must be allowed too: listed in ``allowed_origins``, naming an
allowed host or (on loopback) a loopback host, or naming the very authority of
``Host``. A missing ``Origin`` is accepted: non-browser clients send none. ``null`` and
anything that is not ``http(s)://host[:port]`` is refused.

Parsing is strict, so that no two readers disagree on which host a header names:
``host[:port]`` with a DNS-style name, a dotted IPv4 address or a bracketed IPv6
address, a decimal port up to 65535, nothing else. ``localhost:80@evil.example``,
``localhost.evil``, user info, paths, spaces and percent-escapes are refused (a
malformed ``Host`` is 400, an unknown one 403).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, final

import attrs

from ._guards import SERVER_ERROR, Headers, HttpError, kept

__all__ = [
    "ANY_HOST",
    "LOOPBACK_NAMES",
    "HostPolicy",
    "check_host_and_origin",
    "is_loopback",
    "parse_authority",
    "parse_origin",
]

#: Host names a loopback server answers to (with any port).
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})
#: The ``allowed_hosts`` entry that accepts any ``Host`` (``Origin`` is still checked).
ANY_HOST: Final = "*"

_AUTHORITY: Final = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]{2,45})\]|(?P<name>[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?\.?))"
    r"(?::(?P<port>[0-9]{1,5}))?"
)
_ORIGIN: Final = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,15})://(?P<authority>[^/?#@\s]+)")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def is_loopback(host: str | None) -> bool:
    """Whether an address (``scope["server"][0]``) is a loopback address."""
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


@kept
def parse_authority(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` -> (normalised host, port), or ``None`` when it is malformed.

    The host is lower-cased without a trailing dot; IPv6 addresses keep their brackets
    in compressed form (``[::1]``), so equal hosts compare equal.
    """
    match = _AUTHORITY.fullmatch(value)
    if match is None:
        return None
    port_text = match.group("port")
    port = int(port_text) if port_text is not None else None
    if port is not None and port > 65535:
        return None
    v6 = match.group("v6")
    if v6 is not None:
        try:
            return f"[{ipaddress.IPv6Address(v6).compressed}]", port
        except ValueError:
            return None
    name = match.group("name").lower().removesuffix(".")
    if ".." in name or not name:
        return None
    return name, port


@kept
def parse_origin(value: str) -> tuple[str, str, int] | None:
    """``scheme://host[:port]`` -> (scheme, host, port), or ``None`` when malformed;
    a missing port is the scheme's default."""
    match = _ORIGIN.fullmatch(value)
    if match is None:
        return None
    scheme = match.group("scheme").lower()
    authority = parse_authority(match.group("authority"))
    if scheme not in _DEFAULT_PORTS or authority is None:
        return None
    host, port = authority
    return scheme, host, _DEFAULT_PORTS[scheme] if port is None else port


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _names(values: Iterable[str]) -> frozenset[str]:
    return frozenset(v.strip().lower().removesuffix(".") for v in values)


@final
@attrs.frozen(kw_only=True)
class HostPolicy:
    """The DNS-rebinding guard (on by default); the module doc has the rules.

    Attributes:
      enabled: ``False`` switches both checks off (then log why you did it).
      loopback: ``True`` when the server is bound to loopback; ``None`` decides per
        request from the local address the request arrived on.
      allowed_hosts: further host names (no port) accepted in ``Host`` and ``Origin``;
        ``"*"`` accepts any ``Host``.
      allowed_origins: further origins (``scheme://host[:port]``) accepted in ``Origin``.
    """

    enabled: bool = True
    loopback: bool | None = None
    allowed_hosts: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    allowed_origins: frozenset[str] = attrs.field(default=frozenset(), converter=_names)


def _forbidden(what: str) -> HttpError:
    return HttpError(403, f"Forbidden: {what} not allowed", code=SERVER_ERROR)


def check_host_and_origin(policy: HostPolicy, scope: Mapping[str, Any], headers: Headers) -> None:
    """Raise 400 for a malformed ``Host``, 403 for a ``Host`` or ``Origin`` the policy
    does not accept (see the module doc)."""
    if not policy.enabled:
        return
    loopback = policy.loopback
    if loopback is None:
        server = scope.get("server")
        loopback = server is not None and is_loopback(str(server[0]))
    values = headers.get_all("host")
    authority = parse_authority(values[0]) if len(values) == 1 else None
    if authority is None:
        raise HttpError(400, "Bad Request: missing or malformed Host header")
    host, port = authority
    allowed = policy.allowed_hosts
    if not (
        ANY_HOST in allowed
        or host in allowed
        or (host in LOOPBACK_NAMES if loopback else _is_ip_literal(host))
    ):
        raise _forbidden("Host")
    origins = headers.get_all("origin")
    if not origins:
        return
    if len(origins) > 1:
        raise _forbidden("Origin")
    origin = origins[0].strip().lower()
    parsed = parse_origin(origin)
    if origin in policy.allowed_origins:
        return
    if parsed is None:
        raise _forbidden("Origin")
    _scheme, origin_host, origin_port = parsed
    if origin_host in allowed or (loopback and origin_host in LOOPBACK_NAMES):
        return
    if origin_host == host and (port is None or origin_port == port):
        return
    raise _forbidden("Origin")

"""The verified caller of a request, and the errors of token verification."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, final

import attrs

__all__ = ["InvalidToken", "Principal", "VerifierUnavailable", "parse_scopes"]


class InvalidToken(Exception):
    """The token is not acceptable here: malformed, forged, expired, for another
    audience, revoked ... The message is a short description safe to send to the client
    (``error_description``): it never holds the token or a claim's value."""


class VerifierUnavailable(Exception):
    """The token cannot be judged now (the key set or the introspection endpoint is out
    of reach): the request gets 503 with ``Retry-After``, never a verdict on the token.

    ``retry_after`` is the number of seconds the client should wait.
    """

    def __init__(self, message: str, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _frozen(values: Iterable[str]) -> frozenset[str]:
    return frozenset(values.split()) if isinstance(values, str) else frozenset(values)


def _tuple(values: Iterable[str]) -> tuple[str, ...]:
    return (values,) if isinstance(values, str) else tuple(values)


@final
@attrs.frozen
class Principal:
    """Who a request acts for, from a verified access token.

    Attributes:
      subject: the token's ``sub`` (the user), ``None`` for a token issued to a client
        acting for itself.
      client_id: the OAuth client the token was issued to (``client_id`` or ``azp``).
      scopes: the scopes granted.
      issuer: the authorization server that issued it (``iss``).
      audience: the resources it was issued for (``aud``).
      expires_at: Unix seconds when it expires (``exp``), or ``None``.
      jkt: the JWK thumbprint the token is bound to (``cnf.jkt``, DPoP), or ``None``.
      claims: everything the token (or its introspection) said, for the application.
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=_frozen)
    issuer: str | None = None
    audience: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    expires_at: float | None = None
    jkt: str | None = None
    claims: Mapping[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def identity(self) -> str:
        """Who this is, whatever token it presents: issuer, subject and client. Per-caller
        state (a session, a task, a sealed request state) belongs to one identity."""
        return json.dumps([self.issuer, self.subject, self.client_id], separators=(",", ":"))

    def has_scopes(self, needed: frozenset[str]) -> bool:
        return needed <= self.scopes


def parse_scopes(value: object) -> frozenset[str]:
    """Scopes from a ``scope`` claim (space-separated) or an ``scp`` list."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(v for v in value if isinstance(v, str) and v)
    return frozenset()

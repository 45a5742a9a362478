"""What an authorization yields and where it is kept: tokens, client registrations.

:class:`Tokens` are stored per protected resource (the MCP server's resource
identifier), :class:`ClientInfo` per authorization server (its issuer): credentials
obtained from one authorization server are never offered to another. Neither prints a
secret in its ``repr``. :class:`TokenStorage` is the pluggable store (a keyring, a file,
a database); :class:`MemoryTokenStorage`, the default, keeps at most ``max_entries`` of
each kind for the life of the process, dropping the least recently used.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol, TypeVar, final

import attrs
import trio

__all__ = ["ClientInfo", "MemoryTokenStorage", "TokenStorage", "Tokens"]

T = TypeVar("T")


@final
@attrs.frozen(kw_only=True)
class Tokens:
    """An access token and what came with it."""

    access_token: str = attrs.field(repr=False)
    token_type: str = "Bearer"
    """``Bearer``, or ``DPoP`` for a token bound to the client's DPoP key."""
    expires_at: float | None = None
    """Unix seconds when it expires (``None``: the server did not say)."""
    refresh_token: str | None = attrs.field(default=None, repr=False)
    scope: tuple[str, ...] | None = None
    """The scopes granted (``None``: the server did not say; assume those asked for)."""
    issuer: str | None = None
    """The authorization server that issued it."""
    resource: str | None = None
    """The resource (RFC 8707) it was obtained for."""
    dpop_jkt: str | None = None
    """JWK thumbprint of the DPoP key the token is bound to."""

    @property
    def dpop(self) -> bool:
        return self.token_type.lower() == "dpop"


@final
@attrs.frozen(kw_only=True)
class ClientInfo:
    """A client's registration with one authorization server."""

    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    """``none``, ``client_secret_basic``, ``client_secret_post`` (``None``: choose from
    what the server supports)."""
    issuer: str | None = None
    """The authorization server it is registered with (``None``: any, for credentials
    given by hand)."""


class TokenStorage(Protocol):
    """Where tokens and client registrations are kept (see the module doc)."""

    async def get_tokens(self, resource: str) -> Tokens | None: ...

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        """Store (``None``: forget) the tokens for ``resource``."""
        ...

    async def get_client(self, issuer: str) -> ClientInfo | None: ...

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Store (``None``: forget) the registration with ``issuer``."""
        ...


def _put(table: OrderedDict[str, T], key: str, value: T | None, limit: int) -> None:
    table.pop(key, None)
    if value is None:
        return
    table[key] = value
    while len(table) > limit:
        table.popitem(last=False)


@final
class MemoryTokenStorage:
    """A :class:`TokenStorage` in memory (see the module doc)."""

    def __init__(self, max_entries: int = 64) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._tokens: OrderedDict[str, Tokens] = OrderedDict()
        self._clients: OrderedDict[str, ClientInfo] = OrderedDict()

    async def get_tokens(self, resource: str) -> Tokens | None:
        await trio.lowlevel.checkpoint()
        found = self._tokens.get(resource)
        if found is not None:
            self._tokens.move_to_end(resource)
        return found

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        await trio.lowlevel.checkpoint()
        _put(self._tokens, resource, tokens, self.max_entries)

    async def get_client(self, issuer: str) -> ClientInfo | None:
        await trio.lowlevel.checkpoint()
        found = self._clients.get(issuer)
        if found is not None:
            self._clients.move_to_end(issuer)
        return found

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        await trio.lowlevel.checkpoint()
        _put(self._clients, issuer, client, self.max_entries)

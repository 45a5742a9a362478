"""What a session knows about itself and its peer once the handshake is done."""

from __future__ import annotations

import enum
from typing import Final, final

import attrs

from trimcp.protocol import ClientCapabilities, Implementation, ServerCapabilities

__all__ = ["IdentityEnum", "Phase", "Role", "SessionState"]


class IdentityEnum(enum.Enum):
    """An enum whose members (singletons) hash by identity, a C slot, rather than by
    Enum's Python-level ``__hash__``: the session's lifecycle table is looked up by
    them for every message."""

    __hash__ = object.__hash__


class Role(enum.Enum):
    """Which end of the protocol a session plays; it picks the middleware stacks."""

    CLIENT = "client"
    SERVER = "server"


class Phase(IdentityEnum):
    """Where a session is in its lifecycle; moved only by :mod:`._lifecycle`'s table."""

    #: Nothing yet: a server waits for ``initialize``, a client has not begun.
    NEW = "new"
    #: ``initialize`` is being handled (server) or awaits its answer (client).
    INITIALIZING = "initializing"
    #: ``initialize`` was answered; ``notifications/initialized`` not yet received
    #: (server) or sent (client).
    INITIALIZED = "initialized"
    #: The handshake is complete.
    OPERATING = "operating"
    #: The stateless era: no handshake (a client that adopted it; a server's view of a
    #: stateless-era request).
    STATELESS = "stateless"
    #: No new requests: a graceful shutdown, or the input ended; answers still go out.
    DRAINING = "draining"
    CLOSED = "closed"


_INITIALIZED: Final = frozenset({Phase.INITIALIZED, Phase.OPERATING, Phase.STATELESS})
_READY: Final = frozenset({Phase.OPERATING, Phase.STATELESS})


@final
@attrs.define(kw_only=True)
class SessionState:
    """The negotiated view of a session, shared by every handler context in it.

    It is filled in by the lifecycle (``initialize`` on the server, the answer to it on
    the client) and read by handlers through ``ctx.session``. Until the handshake is
    done ``protocol_version`` is ``None``.
    """

    protocol_version: str | None = None
    client_info: Implementation | None = None
    server_info: Implementation | None = None
    client_capabilities: ClientCapabilities = attrs.field(factory=ClientCapabilities)
    server_capabilities: ServerCapabilities = attrs.field(factory=ServerCapabilities)
    instructions: str | None = None
    #: The minimum level of ``notifications/message`` the client asked for with
    #: ``logging/setLevel`` (``None``: it did not ask, so every level is sent).
    log_level: str | None = None
    phase: Phase = Phase.NEW

    @property
    def initialized(self) -> bool:
        """``initialize`` was answered (server) or received its answer (client)."""
        return self.phase in _INITIALIZED

    @property
    def ready(self) -> bool:
        """``notifications/initialized`` was received (server) or sent (client)."""
        return self.phase in _READY

    @property
    def stateless(self) -> bool:
        """A stateless-era view (2026-07-28): no handshake happened, the version and
        client capabilities came in the request's ``_meta``, and a missing
        ``log_level`` means "send no log messages" rather than "send all"."""
        return self.phase is Phase.STATELESS

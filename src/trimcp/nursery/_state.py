"""What a session knows about itself and its peer once the handshake is done."""

from __future__ import annotations

import enum
from typing import final

import attrs

from trimcp.protocol import ClientCapabilities, Implementation, ServerCapabilities

__all__ = ["Role", "SessionState"]


class Role(enum.Enum):
    """Which end of the protocol a session plays; it picks the middleware stacks."""

    CLIENT = "client"
    SERVER = "server"


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
    #: ``initialize`` was answered (server) or received its answer (client).
    initialized: bool = False
    #: ``notifications/initialized`` was received (server) or sent (client).
    ready: bool = False
    #: The minimum level of ``notifications/message`` the client asked for with
    #: ``logging/setLevel`` (``None``: it did not ask, so every level is sent).
    log_level: str | None = None
    #: A stateless-era request's own view (2026-07-28): no handshake happened, the
    #: version and client capabilities came in this request's ``_meta``, and a missing
    #: ``log_level`` means "send no log messages" rather than "send all".
    stateless: bool = False

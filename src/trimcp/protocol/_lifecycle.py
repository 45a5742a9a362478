"""The handshake-era ``initialize`` exchange."""

from __future__ import annotations

from typing import Any, final

import attrs

from ._capabilities import ClientCapabilities, ServerCapabilities
from ._metadata import Implementation

__all__ = ["InitializeParams", "InitializeResult"]


@final
@attrs.frozen(kw_only=True)
class InitializeParams:
    """``initialize`` params: the client's latest version, its capabilities and identity."""

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class InitializeResult:
    """The server's answer: the negotiated version (see ``negotiate_version``), its
    capabilities and identity, and optional ``instructions`` for the model."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
    meta: dict[str, Any] | None = None

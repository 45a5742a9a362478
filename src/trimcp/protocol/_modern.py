"""The stateless era's per-request ``_meta`` (2026-07-28), read and checked in one place.

In the stateless era there is no handshake: every request carries its protocol version
and the client's capabilities in ``params._meta``, under reserved keys. This module
names those keys and turns a request's params into a :class:`RequestMeta`, or into the
exact error the spec prescribes, in the spec's order of checks:

1. ``_meta`` present with both required keys, each of the right type: else
   ``-32602 Invalid params`` (HTTP 400);
2. the version supported: else ``-32022 UnsupportedProtocolVersion`` with
   ``data = {"supported": [...], "requested": "..."}`` (HTTP 400).

(Header consistency, ``-32020``, is the HTTP transport's check and comes between the two
when the header itself names a supported version; see ``transports.http``.)

:func:`is_stateless_request` decides the era of one request: the presence of any
reserved request key in ``_meta`` marks it stateless, so a malformed stateless request
(one required key missing) still gets the stateless error rather than the handshake
era's "not initialized".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

__all__ = [
    "CLIENT_CAPABILITIES_META",
    "CLIENT_INFO_META",
    "LOG_LEVEL_META",
    "PROTOCOL_VERSION_META",
    "SERVER_INFO_META",
    "SUBSCRIPTION_ID_META",
    "TRACE_META_KEYS",
    "MetaProblem",
    "RequestMeta",
    "is_stateless_request",
    "read_request_meta",
    "unsupported_version",
]

PROTOCOL_VERSION_META: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_META: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META: Final = "io.modelcontextprotocol/subscriptionId"
TRACE_META_KEYS: Final = ("traceparent", "tracestate", "baggage")
"""W3C Trace Context / Baggage keys, kept verbatim for the handler (and its spans)."""

_REQUEST_KEYS: Final = frozenset(
    {PROTOCOL_VERSION_META, CLIENT_CAPABILITIES_META, CLIENT_INFO_META, LOG_LEVEL_META}
)
_LEVELS: Final = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)


@final
@attrs.frozen(kw_only=True)
class RequestMeta:
    """The reserved members of one stateless-era request's ``_meta``.

    ``client_capabilities`` and ``client_info`` are the raw wire objects (the server
    structures them with the binding converter); ``log_level`` is ``None`` when the
    request asked for no log messages, in which case none may be sent for it.
    """

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    trace: dict[str, str] = attrs.field(factory=dict)


@final
@attrs.frozen
class MetaProblem:
    """Why a stateless request's ``_meta`` was refused: the JSON-RPC error to answer."""

    code: int
    message: str
    data: Any = None


def is_stateless_request(params: Mapping[str, Any] | None) -> bool:
    """Whether ``params._meta`` holds any reserved stateless-era request key."""
    if not params:
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and not _REQUEST_KEYS.isdisjoint(meta)


def read_request_meta(
    params: Mapping[str, Any] | None, supported: Sequence[str]
) -> RequestMeta | MetaProblem:
    """The request's :class:`RequestMeta`, or the :class:`MetaProblem` to answer with.

    ``supported`` are the stateless-era versions the server serves; the error for an
    unsupported one lists them. Unknown ``_meta`` keys are ignored, as the spec asks.
    """
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if not isinstance(meta, dict):
        return MetaProblem(-32602, "Invalid params: params._meta is required")
    version = meta.get(PROTOCOL_VERSION_META)
    if not isinstance(version, str):
        return MetaProblem(-32602, f"Invalid params: _meta[{PROTOCOL_VERSION_META!r}] is required")
    capabilities = meta.get(CLIENT_CAPABILITIES_META)
    if not isinstance(capabilities, dict):
        return MetaProblem(
            -32602, f"Invalid params: _meta[{CLIENT_CAPABILITIES_META!r}] is required"
        )
    if version not in supported:
        return unsupported_version(version, supported)
    info = meta.get(CLIENT_INFO_META)
    if info is not None and not isinstance(info, dict):
        return MetaProblem(-32602, f"Invalid params: _meta[{CLIENT_INFO_META!r}] is not an object")
    level = meta.get(LOG_LEVEL_META)
    if level is not None and (not isinstance(level, str) or level not in _LEVELS):
        return MetaProblem(-32602, f"Invalid params: unknown log level {level!r}")
    trace = {k: v for k in TRACE_META_KEYS if isinstance(v := meta.get(k), str)}
    return RequestMeta(
        protocol_version=version,
        client_capabilities=capabilities,
        client_info=info,
        log_level=level,
        trace=trace,
    )


def unsupported_version(requested: str, supported: Sequence[str]) -> MetaProblem:
    """The ``-32022`` answer for ``requested``, listing the ``supported`` versions."""
    return MetaProblem(
        -32022,
        f"Unsupported protocol version: {requested}",
        {"supported": list(supported), "requested": requested},
    )

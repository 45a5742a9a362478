"""Which era the server speaks, and the per-request ``_meta`` of the stateless one.

``open_client(..., era=...)`` takes one of:

* ``"auto"`` (the default): detect it as the 2026-07-28 transport pages prescribe for a
  dual-era client (stdio: probe with ``server/discover`` before any other request;
  Streamable HTTP: send a modern request and read the body of a ``4xx``). The probe is
  ``server/discover`` carrying stateless ``_meta``:

  - a ``DiscoverResult`` naming a stateless version we speak: **stateless**;
  - a recognised stateless-era error: the server is modern. ``-32022`` (unsupported
    version) is retried once with a version its ``data.supported`` shares with us; if
    it lists none, but a handshake-era version, the server is served as handshake era,
    and if it lists neither, the error is raised. ``-32020`` and ``-32021`` are raised
    (the server refuses us: falling back would not help);
  - an HTTP ``401``/``403`` is an authorization challenge, never a sign of an older
    server: the transport's authorization layer answers challenges below this probe,
    so one that reaches it is a refusal, raised as is. Likewise a probe that timed out
    while the transport was authorizing is sent again once authorization settled. An
    HTTP ``5xx`` is no sign of an era either (a failing server), and is raised;
  - anything else (another error code, an HTTP ``4xx`` without a modern error body, a
    result that is not a ``DiscoverResult``, no answer within ``discover_timeout``):
    the server is **handshake era**, and ``initialize`` follows. The fallback is not
    keyed to one error code.
* ``"stateless"``: the same probe, but no fallback: a legacy server is an error.
* ``"handshake"``: ``initialize`` at once, as before 2026-07-28.

The probe stays harmless to a server of the handshake era, whose lifecycle expects
nothing but ``initialize`` (and pings) first: one request, answered with an error or
not at all, and nothing more. A probe that goes unanswered is not followed by
``notifications/cancelled`` (``initialize`` comes next), and its late answer is
dropped. A dual-era server that fixes a connection's era with its first request may
serve that late probe and then refuse ``initialize`` with ``-32022``, naming the
stateless versions it speaks: that is modern evidence too, and the probe is made once
more (:func:`negotiate`).

The result is cached for the life of the client (the connection is the server process
on stdio, the origin on HTTP), as the spec recommends.

In the stateless era, :class:`EraState` stamps every outgoing
request's ``params._meta`` with ``io.modelcontextprotocol/protocolVersion``,
``clientCapabilities`` (the handlers given to ``open_client``, in the 2026-07-28 shape),
``clientInfo`` and, once :meth:`~trimcp.Client.set_logging_level` was called,
``logLevel`` (the stateless era's replacement for ``logging/setLevel``).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal, final

import attrs

from trimcp.binding import structure, unstructure
from trimcp.dispatch import (
    ConnectionClosedError,
    McpError,
    Middlewares,
    MiddlewareStack,
    RequestTimeoutError,
)
from trimcp.nursery import Event, Session
from trimcp.protocol import (
    CLIENT_CAPABILITIES_META,
    CLIENT_INFO_META,
    HANDSHAKE_VERSIONS,
    LOG_LEVEL_META,
    PROTOCOL_VERSION_META,
    SERVER_INFO_META,
    STATELESS_VERSIONS,
    ClientCapabilities,
    Implementation,
    ListToolsResult,
    ServerCapabilities,
)
from trimcp.wire import (
    HEADER_MISMATCH,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    Message,
    Request,
)

__all__ = [
    "DEFAULT_DISCOVER_TIMEOUT",
    "EraChoice",
    "EraState",
    "client_middlewares",
    "detect_era",
    "negotiate",
    "stateless_capabilities",
]

logger = logging.getLogger("trimcp.client")

EraChoice = Literal["auto", "handshake", "stateless"]

DEFAULT_DISCOVER_TIMEOUT: Final = 10.0
"""Seconds the ``server/discover`` probe waits; silence means a handshake-era server."""

_REFUSALS: Final = frozenset({HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY})


def stateless_capabilities(capabilities: ClientCapabilities) -> dict[str, Any]:
    """``capabilities`` as a 2026-07-28 ``clientCapabilities`` object.

    The era dropped ``roots.listChanged`` (no change notifications from the client)
    and the ``tasks`` member (tasks are an extension now).
    """
    wire: dict[str, Any] = unstructure(capabilities)
    wire.pop("tasks", None)
    roots = wire.get("roots")
    if isinstance(roots, dict):
        wire["roots"] = {k: v for k, v in roots.items() if k != "listChanged"}
    return wire


@final
class EraState:
    """The era a client speaks, and the ``_meta`` it stamps on stateless-era requests.

    ``version`` is the stateless-era revision in use, or ``None`` in the handshake era
    (then requests go out untouched).
    """

    def __init__(self, info: Implementation, capabilities: ClientCapabilities) -> None:
        self.version: str | None = None
        self.capabilities = stateless_capabilities(capabilities)
        self.info: dict[str, Any] = unstructure(info)
        self.log_level: str | None = None

    @property
    def stateless(self) -> bool:
        return self.version is not None

    def meta(self) -> dict[str, Any]:
        """The reserved ``_meta`` members of the next request."""
        assert self.version is not None
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_META: self.version,
            CLIENT_CAPABILITIES_META: self.capabilities,
            CLIENT_INFO_META: self.info,
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_META] = self.log_level
        return meta

    def stamp(self, message: Message) -> Message:
        """``message`` as it goes out: stamped if it is a stateless-era request (see the
        module doc). Run before the client-send middleware, as their outermost step."""
        if self.version is not None and isinstance(message, Request):
            params = dict(message.params or {})
            existing = params.get("_meta")
            # What the caller put in this request's _meta wins: per-request capabilities
            # (an extension declared for one call, say) are the era's design.
            params["_meta"] = {**self.meta(), **(existing if isinstance(existing, dict) else {})}
            return Request(id=message.id, method=message.method, params=params)
        return message

    def accept_tools(self, session: Session, result: ListToolsResult) -> ListToolsResult:
        """Leave out tools whose ``x-mcp-header`` annotations are invalid (HTTP only).

        The HTTP channel remembers the valid ones' annotations for ``Mcp-Param-*``
        headers; other transports may ignore the annotations, as the spec allows.
        """
        table = getattr(session.channel, "tool_headers", None)
        if not self.stateless or table is None:
            return result
        kept = []
        for tool in result.tools:
            reason = table.learn(tool.name, tool.input_schema)
            if reason is None:
                kept.append(tool)
            else:
                logger.warning("ignoring tool %r: invalid x-mcp-header (%s)", tool.name, reason)
        if len(kept) == len(result.tools):
            return result
        return attrs.evolve(result, tools=kept)


def client_middlewares(user: Middlewares | None) -> Middlewares:
    """A fresh :class:`Middlewares` whose stacks follow the user's (whose object is
    left untouched, so it can be shared): middleware the user adds later reaches the
    live session, and what the client adds to its own stacks is outermost."""
    user = user or Middlewares()
    out = Middlewares(
        client_send=MiddlewareStack("client_send", follow=user.client_send),
        client_recv=MiddlewareStack("client_recv", follow=user.client_recv),
        server_send=MiddlewareStack("server_send", follow=user.server_send),
        server_recv=MiddlewareStack("server_recv", follow=user.server_recv),
    )
    return out


def _supported(data: Any) -> list[str]:
    found = data.get("supported") if isinstance(data, dict) else None
    return [v for v in found if isinstance(v, str)] if isinstance(found, list) else []


def _refused_authorization(exc: McpError) -> bool:
    """An HTTP 401/403: a challenge the transport could not answer (see the module doc)."""
    return isinstance(exc.data, dict) and exc.data.get("httpStatus") in (401, 403)


async def _authorized_meanwhile(session: Session) -> bool:
    """Whether the channel ran authorization (waiting for it to settle)."""
    settled = getattr(session.channel, "authorization_settled", None)
    return settled is not None and bool(await settled())


def _adopt(session: Session, state: EraState, result: dict[str, Any]) -> None:
    """Record what ``server/discover`` said in the session state (the stateless view)."""
    view = session.state
    assert state.version is not None
    view.protocol_version = state.version
    try:
        view.server_capabilities = structure(result.get("capabilities") or {}, ServerCapabilities)
    except Exception:  # a malformed member: treat the server as offering nothing optional
        view.server_capabilities = ServerCapabilities()
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_META) if isinstance(meta, dict) else None
    info = info if isinstance(info, dict) else result.get("serverInfo")
    try:
        view.server_info = structure(info, Implementation) if isinstance(info, dict) else None
    except Exception:
        view.server_info = None  # self-reported, informational
    instructions = result.get("instructions")
    view.instructions = instructions if isinstance(instructions, str) else None
    session.lifecycle.handle(Event.DISCOVERED)
    session.channel.negotiated(state.version)


class _Verdict(enum.Enum):
    """What an error answering the probe says about the server."""

    RETRY = "retry"  # modern, with another version we share
    LEGACY = "legacy"  # the handshake era: initialize
    RAISE = "raise"  # modern and refusing us, or no evidence at all


def _judge(exc: McpError, wanted: Sequence[str]) -> _Verdict:
    """The one place that reads a failed probe (stdio error or HTTP refusal alike)."""
    status = exc.data.get("httpStatus") if isinstance(exc.data, dict) else None
    failing = isinstance(status, int) and status >= 500  # a failing server: no evidence
    if exc.code in _REFUSALS or _refused_authorization(exc) or failing:
        return _Verdict.RAISE
    if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
        supported = _supported(exc.data)
        if any(v in wanted for v in supported):
            return _Verdict.RETRY
        if supported and not any(v in HANDSHAKE_VERSIONS for v in supported):
            return _Verdict.RAISE  # modern only, and no version in common
    return _Verdict.LEGACY


async def detect_era(
    session: Session,
    state: EraState,
    *,
    stateless_only: bool,
    versions: Sequence[str] = STATELESS_VERSIONS,
    timeout: float = DEFAULT_DISCOVER_TIMEOUT,
) -> bool:
    """Probe with ``server/discover``; True (and the state adopted) if stateless.

    See the module doc for the rules. With ``stateless_only`` a legacy answer raises
    instead of returning False.
    """
    wanted = [v for v in reversed(STATELESS_VERSIONS) if v in versions]
    if not wanted:
        raise ValueError(f"no stateless-era version among {list(versions)}")
    state.version = wanted[0]
    why = "no answer"
    for attempt in range(2):
        try:
            raw = await session.request(
                "server/discover", {}, timeout=timeout, announce_cancel=False
            )
        except ConnectionClosedError:
            raise
        except RequestTimeoutError:
            if attempt == 0 and await _authorized_meanwhile(session):
                continue
            why = "server/discover got no answer in time"
            break
        except McpError as exc:
            verdict = _judge(exc, wanted)
            if verdict is _Verdict.RAISE:
                raise
            mutual = [v for v in wanted if v in _supported(exc.data)]
            if verdict is _Verdict.RETRY and attempt == 0:
                state.version = mutual[0]
                continue
            why = f"server/discover failed: {exc}"
            break
        listed = raw.get("supportedVersions")
        mutual = [v for v in wanted if isinstance(listed, list) and v in listed]
        if mutual:
            state.version = mutual[0]
            _adopt(session, state, raw)
            return True
        why = "server/discover gave no stateless-era version this client speaks"
        break
    state.version = None
    if stateless_only:
        raise McpError(UNSUPPORTED_PROTOCOL_VERSION, f"not a stateless-era server: {why}")
    logger.debug("handshake-era server (%s)", why)
    return False


async def negotiate(
    session: Session,
    state: EraState,
    era: EraChoice,
    initialize: Callable[[], Awaitable[None]],
    *,
    timeout: float = DEFAULT_DISCOVER_TIMEOUT,
) -> bool:
    """Settle the era as ``era`` asks (module doc); True if stateless.

    ``initialize`` runs the handshake. Refused with ``-32022`` naming a stateless
    version we speak (a dual-era server that served a probe we had given up on, and
    fixed the connection's era with it), the probe is made once more instead.
    """
    if era != "handshake" and await detect_era(
        session, state, stateless_only=era == "stateless", timeout=timeout
    ):
        return True
    try:
        await initialize()
    except McpError as exc:
        mutual = [v for v in STATELESS_VERSIONS if v in _supported(exc.data)]
        if era != "auto" or exc.code != UNSUPPORTED_PROTOCOL_VERSION or not mutual:
            raise
        logger.debug("initialize refused with -32022 %s: probing again", mutual)
        return await detect_era(
            session, state, stateless_only=True, versions=mutual, timeout=timeout
        )
    return False

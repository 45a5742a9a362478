"""The stateless era (2026-07-28) beside the handshake era, in one method table.

Every route of :class:`~trimcp.server.Server` goes through :class:`EraFront`. It decides
the era of each request on its own, as the 2026-07-28 versioning rules say a dual-era
server must:

* a request whose ``_meta`` holds a reserved stateless key (``protocolVersion``,
  ``clientCapabilities`` ...), or that came over a transport that is stateless by
  construction (a 2026-07-28 HTTP POST), or whose method exists only in that era
  (``server/discover``, ``subscriptions/listen``), is served **statelessly**: its
  ``_meta`` is checked (``-32602``, ``-32022``), the handler sees a per-request
  :class:`~trimcp.nursery.SessionState` built from it, methods the era removed are
  ``-32601``, and the result gets ``resultType``, ``serverInfo`` and, where the spec
  asks, cache hints;
* anything else follows the handshake-era lifecycle of the session it came on, which
  the session's own table judges before the request is admitted
  (:mod:`trimcp.nursery._lifecycle`); :meth:`EraFront.exempt` tells it which requests
  are this layer's to judge.

So one stdio process or HTTP endpoint serves both: an ``initialize`` starts a session,
a request with stateless ``_meta`` is answered on its own, whatever came before it.

``tools/call``, ``prompts/get`` and ``resources/read`` may need input from the client:
see :mod:`._mrtr` for how reverse calls become ``InputRequiredResult`` rounds here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, final

from trimcp.binding import structure, unstructure
from trimcp.dispatch import McpError
from trimcp.nursery import HandlerContext, MessageChannel, Phase, SessionState
from trimcp.protocol import (
    STATELESS_VERSIONS,
    ClientCapabilities,
    Implementation,
    MetaProblem,
    RequestMeta,
    is_stateless_request,
    read_request_meta,
)
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND, NO_DATA, RESOURCE_NOT_FOUND, Request

from ._mrtr import MRTR_METHODS, InputRound, only_input_required, strip_input_required
from ._param_headers import check_param_headers
from ._request_state import RequestStateError, RequestStateSealer

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["HANDSHAKE_ONLY", "STATELESS_ONLY", "CachePolicy", "EraFront"]

HANDSHAKE_ONLY: Final = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
"""Methods the stateless era removed: ``-32601`` (HTTP 404) when asked statelessly."""

STATELESS_ONLY: Final = frozenset({"server/discover", "subscriptions/listen"})
"""Methods that exist only in the stateless era: always served statelessly."""

CACHEABLE: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
    }
)
"""Results that must carry ``ttlMs`` and ``cacheScope`` (``server/utilities/caching``)."""

RESULT_TYPE: Final = "resultType"

Handler = Callable[[HandlerContext, Any], Awaitable[Any]]


@final
class CachePolicy:
    """The cache hints of cacheable stateless-era results.

    Args:
      ttl_ms: how long, in milliseconds, a client may reuse a result (default 0: it may
        keep it but must revalidate before reuse). Lists change at run time and the
        change notifications reach only listening clients, so a long TTL is a choice
        for servers whose lists are fixed.
      scope: ``"public"`` (the same for every caller) or ``"private"`` (depends on who
        asks; never shared across authorization contexts).
      per_method: overrides by method name, ``{method: (ttl_ms, scope)}``.
    """

    def __init__(
        self,
        ttl_ms: int = 0,
        scope: str = "public",
        per_method: dict[str, tuple[int, str]] | None = None,
    ) -> None:
        for ttl, sc in [(ttl_ms, scope), *(per_method or {}).values()]:
            if ttl < 0 or sc not in ("public", "private"):
                raise ValueError(f"bad cache hint ({ttl}, {sc!r})")
        self.ttl_ms = ttl_ms
        self.scope = scope
        self.per_method = dict(per_method or {})

    def hints(self, method: str) -> dict[str, Any]:
        ttl, scope = self.per_method.get(method, (self.ttl_ms, self.scope))
        return {"ttlMs": ttl, "cacheScope": scope}


def _binding(method: str, params: dict[str, Any], principal: str | None) -> dict[str, Any]:
    """What a sealed ``requestState`` is bound to: the method, its target, its arguments,
    and the caller (with authorization: a state opens only for the caller it was sealed
    for)."""
    target = params.get("uri") if method == "resources/read" else params.get("name")
    arguments = params.get("arguments")
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    binding = {
        "method": method,
        "target": target if isinstance(target, str) else None,
        "arguments": hashlib.sha256(text.encode()).hexdigest(),
    }
    if principal is not None:
        binding["principal"] = principal
    return binding


@final
class EraFront:
    """Wraps each route of a server so that it serves both eras (see the module doc)."""

    def __init__(self, server: Server, sealer: RequestStateSealer, cache: CachePolicy) -> None:
        self.server = server
        self.sealer = sealer
        self.cache = cache
        self._versions: tuple[str, ...] = ()
        self._versions_of: tuple[str, ...] | None = None
        self._last_caps: tuple[object, ClientCapabilities | None] = (None, None)
        self._last_info: tuple[object, Implementation | None] = (None, None)
        self._info: tuple[object, dict[str, Any]] = (None, {})

    @property
    def versions(self) -> tuple[str, ...]:
        """The stateless-era revisions the server serves (recomputed only when its
        ``supported_versions`` changes: every request asks)."""
        supported = self.server.supported_versions
        if supported is not self._versions_of:
            self._versions = tuple(v for v in supported if v in STATELESS_VERSIONS)
            self._versions_of = supported
        return self._versions

    def _stateless_on(self, channel: MessageChannel, method: str, params: Any) -> bool:
        # The cached versions read inline (every request asks; the property recomputes).
        fresh = self.server.supported_versions is self._versions_of
        if not (self._versions if fresh else self.versions):
            return False  # a server of the handshake era only: it ignores the era's _meta
        if method in STATELESS_ONLY:
            return True
        if getattr(channel, "stateless_era", False):
            return True
        if not isinstance(params, dict) or "_meta" not in params:
            return False  # (no call for the common request without _meta)
        return is_stateless_request(params)

    def exempt(self, channel: MessageChannel, request: Request) -> bool:
        """Whether ``request``, read on ``channel``, is judged here rather than by the
        session's handshake lifecycle: a stateless-era request, or a method of that era
        only (which a handshake-only server answers ``-32601``)."""
        method = request.method
        return method in STATELESS_ONLY or self._stateless_on(channel, method, request.params)

    def wrap(self, method: str, handler: Handler, params_type: type[Any] | None) -> Handler:
        """The route for ``method``: era decision, checks, params structuring, result."""

        # A plain function handing back the handler's awaitable (or the stateless
        # path's): a long-running request keeps no frame of this layer alive.
        def run(ctx: HandlerContext, params: Any) -> Awaitable[Any]:
            if not self._stateless_on(ctx.session_object.channel, method, ctx.params):
                if method in STATELESS_ONLY:  # unknown to a handshake-era-only server
                    raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
                if params_type is not None:
                    params = structure(params or {}, params_type)
                    ctx.params = params
                return handler(ctx, params)
            return self._stateless(ctx, method, handler, params_type, params)

        return run

    # ------------------------------------------------------------------ stateless
    def _state(self, meta: RequestMeta) -> SessionState:
        # A client sends the same capabilities and info with every request: the last
        # ones structured are reused while they compare equal (a dict compare costs a
        # fraction of structuring).
        raw_caps = meta.client_capabilities
        if raw_caps != self._last_caps[0] or self._last_caps[1] is None:
            try:
                self._last_caps = (raw_caps, structure(raw_caps, ClientCapabilities))
            except Exception as exc:
                raise McpError(
                    INVALID_PARAMS, f"Invalid params: clientCapabilities: {exc}"
                ) from None
        capabilities = self._last_caps[1]
        assert capabilities is not None
        info: Implementation | None = None
        raw_info = meta.client_info
        if raw_info is not None and raw_info == self._last_info[0]:
            info = self._last_info[1]
        elif raw_info is not None:
            try:
                info = structure(raw_info, Implementation)
            except Exception:
                info = None  # self-reported and informational: never a reason to refuse
            self._last_info = (raw_info, info)
        server = self.server
        return SessionState(
            protocol_version=meta.protocol_version,
            client_info=info,
            server_info=server.info,
            client_capabilities=capabilities,
            server_capabilities=server.capabilities(),
            instructions=server.instructions,
            log_level=meta.log_level,
            phase=Phase.STATELESS,
        )

    async def _stateless(
        self,
        ctx: HandlerContext,
        method: str,
        handler: Handler,
        params_type: type[Any] | None,
        params: Any,
    ) -> Any:
        raw = params if isinstance(params, dict) else {}
        meta = read_request_meta(raw, self.versions)
        if isinstance(meta, MetaProblem):
            raise McpError(meta.code, meta.message, NO_DATA if meta.data is None else meta.data)
        if method in HANDSHAKE_ONLY:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
        ctx.state = self._state(meta)
        inputs: InputRound | None = None
        binding: Callable[[], dict[str, Any]] | None = None
        if method in MRTR_METHODS:
            # Bound lazily: only a requestState to open or to seal needs the binding
            # (the hash of the arguments), and most calls have neither.
            principal = ctx.principal.identity if ctx.principal is not None else None
            binding = partial(_binding, method, raw, principal)
            inputs = self._answers(binding, raw)
            ctx.extension = inputs
            raw = {k: v for k, v in raw.items() if k not in ("inputResponses", "requestState")}
        if method == "tools/call":
            self._check_param_headers(ctx, raw)
        if params_type is not None:
            params = structure(raw, params_type)
            ctx.params = params
        else:
            params = raw
        try:
            result = await handler(ctx, params)
        except McpError as exc:
            if exc.code == RESOURCE_NOT_FOUND:  # SEP-2164: -32602 in this era
                raise McpError(INVALID_PARAMS, exc.message, exc.data) from None
            raise
        except BaseException as exc:
            if inputs is None or not inputs.requests:
                raise
            if not only_input_required(exc):
                raise strip_input_required(exc) from None
            assert binding is not None
            token = self.sealer.seal(binding(), {"answers": inputs.answers})
            return self._finish(method, inputs.result(token))
        return self._finish(method, result)

    def _check_param_headers(self, ctx: HandlerContext, params: dict[str, Any]) -> None:
        """``Mcp-Param-*`` against the arguments (stateless HTTP POSTs only; see
        :mod:`._param_headers`)."""
        channel = ctx.session_object.channel
        if not getattr(channel, "stateless_era", False):
            return
        read = getattr(channel, "param_headers", None)
        headers = read(ctx.request_id) if callable(read) else None
        if not isinstance(headers, dict):
            return
        name = params.get("name")
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        if tool is not None:
            check_param_headers(tool.tool.input_schema, params.get("arguments"), headers)

    def _answers(self, binding: Callable[[], dict[str, Any]], params: dict[str, Any]) -> InputRound:
        """The input round of this run: the sealed answers of earlier rounds, and this
        retry's ``inputResponses`` (checked when the handler asks for them)."""
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise McpError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        token = params.get("requestState")
        if token is None:
            return InputRound({}, responses)
        if not isinstance(token, str):
            raise McpError(INVALID_PARAMS, "Invalid params: requestState must be a string")
        try:
            data = self.sealer.open(binding(), token)
        except RequestStateError as exc:
            raise McpError(
                INVALID_PARAMS, f"Invalid params: requestState refused ({exc})"
            ) from None
        answers = data.get("answers") if isinstance(data, dict) else None
        return InputRound(answers if isinstance(answers, dict) else {}, responses)

    def _finish(self, method: str, result: Any) -> dict[str, Any]:
        out: dict[str, Any] = (
            result if type(result) is dict else ({} if result is None else unstructure(result))
        )
        out.setdefault(RESULT_TYPE, "complete")
        meta = out.get("_meta")
        meta = dict(meta) if isinstance(meta, dict) else {}
        meta.setdefault("io.modelcontextprotocol/serverInfo", self._server_info())
        out["_meta"] = meta
        if method in CACHEABLE and out[RESULT_TYPE] == "complete":  # not input_required
            for key, value in self.cache.hints(method).items():
                out.setdefault(key, value)
        return out

    def _server_info(self) -> dict[str, Any]:
        """The server's ``Implementation`` as JSON, unstructured again only when it is
        replaced (each result gets a copy: handlers' results are theirs to keep)."""
        info = self.server.info
        if info is not self._info[0]:
            self._info = (info, unstructure(info))
        return dict(self._info[1])

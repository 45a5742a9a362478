"""``ToolContext``: what a tool (or any server handler) can do while it runs.

It wraps the request's :class:`~trimcp.nursery.HandlerContext` and adds the MCP
features that are built on it: logging to the client, and the three reverse calls
(sampling, elicitation, roots). Each reverse call first checks that the client declared
the capability it needs, and fails with :class:`CapabilityError` otherwise, because
sending it anyway would only earn a ``-32601`` from a conforming client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, cast, overload

import trio

from trimcp.binding import json_schema_for, structure, unstructure
from trimcp.dispatch import McpError, UrlElicitationRequiredError
from trimcp.nursery import BackgroundContext, HandlerContext, SessionState, detach_for_background
from trimcp.protocol import (
    TRACE_META_KEYS,
    CreateMessageResult,
    ElicitResult,
    LoggingLevel,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
)
from trimcp.wire import INTERNAL_ERROR, MISSING_CLIENT_CAPABILITY, RequestId

from ._downgrade import fit_requested_schema, fit_sampling_messages
from ._elicitation import (
    complete_elicitation,
    form_elicitation_error,
    parse_elicit_result,
    url_elicitation_params,
    url_elicitation_required,
)
from ._lifespan import current_serving
from ._mrtr import InputRound
from ._sampling import ToolChoiceArg, sampling_tools_params

if TYPE_CHECKING:
    from trimcp.auth import Principal

__all__ = ["CapabilityError", "ToolContext", "log_level_allows"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class CapabilityError(McpError):
    """The peer did not declare the capability a call needs.

    It is ``-32021 MissingRequiredClientCapability`` with ``data.requiredCapabilities``,
    a ``ClientCapabilities`` object holding the missing capability (``required``,
    default ``{capability: {}}``), in every era: 2026-07-28 defines that error for this
    case, the earlier revisions define none, and ``-32601`` would tell the client that
    a method which exists does not (the official Python SDK answers ``-32021`` too).
    """

    def __init__(self, capability: str, *, required: dict[str, Any] | None = None) -> None:
        needed = required if required is not None else {capability: {}}
        super().__init__(
            MISSING_CLIENT_CAPABILITY,
            f"Missing required client capability: {capability}",
            {"requiredCapabilities": needed},
        )
        self.capability = capability


def log_level_allows(state: SessionState, level: str) -> bool:
    """Whether a message at ``level`` passes the level the client set."""
    if state.log_level is None:
        return not state.stateless
    return _LEVELS.index(level) >= _LEVELS.index(state.log_level)


class ToolContext:
    """The context handed to tools and other server handlers.

    A parameter annotated ``ToolContext`` receives it; its lifetime is the request's.
    """

    __trimcp_context__ = True
    __slots__ = ("handler",)

    def __init__(self, handler: HandlerContext) -> None:
        self.handler = handler

    # -- the request ------------------------------------------------------------
    @property
    def request_id(self) -> RequestId:
        """The id of the request being handled."""
        return self.handler.request_id

    @property
    def session(self) -> SessionState:
        """The negotiated session: version, client info and capabilities."""
        return self.handler.session

    @property
    def cancel_scope(self) -> trio.CancelScope:
        """The request's scope; cancelling it ends the request without a response."""
        return self.handler.cancel_scope

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``_meta``."""
        return self.handler.meta

    @property
    def principal(self) -> Principal | None:
        """Who the request acts for, from its verified access token (subject, client id,
        scopes, claims), or ``None`` when the server has no authorization or the
        transport authenticates nobody (stdio, in-memory)."""
        return cast("Principal | None", self.handler.principal)

    @property
    def lifespan_state(self) -> Any:
        """What the server's ``lifespan`` yielded for the serving this request belongs
        to (``None`` without a lifespan; see :mod:`trimcp.server._lifespan`)."""
        serving = current_serving()
        return None if serving is None else serving.state

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request headers of the POST that carried this request (names
        lower-case; repeated headers joined with ``", "``), or ``None`` off Streamable
        HTTP. Read them for what the transport does not do itself, such as a tenant or
        a correlation id; who the caller is comes from ``auth=`` (:attr:`principal`)."""
        lookup = getattr(self.handler.session_object.channel, "request_headers", None)
        headers = lookup(self.request_id) if lookup is not None else None
        if headers is None:
            return None
        return {name: ", ".join(headers.get_all(name)) for name in headers.names()}

    @property
    def trace(self) -> dict[str, str]:
        """The request's W3C Trace Context and Baggage (``traceparent``, ``tracestate``,
        ``baggage`` from ``_meta``, those present), for the handler's own spans."""
        meta = self.handler.meta
        return {key: value for key in TRACE_META_KEYS if isinstance(value := meta.get(key), str)}

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress (a no-op when the caller asked for none); never decreasing."""
        await self.handler.report_progress(progress, total, message)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification that belongs to this request."""
        await self.handler.notify(method, params)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, key: str | None = None
    ) -> dict[str, Any]:
        """Send a raw request to the client on behalf of this request (in the stateless
        era, an input round: only sampling, elicitation and roots can be asked, and
        ``key`` names the input request; see :mod:`trimcp.server._mrtr`)."""
        return await self._reverse(method, params, key)

    async def log(self, level: LoggingLevel | str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client's log level lets it through
        (a checkpoint either way)."""
        name = level.value if isinstance(level, LoggingLevel) else level
        if name not in _LEVELS:
            raise ValueError(f"unknown log level {name!r}")
        if not log_level_allows(self.session, name):
            await trio.lowlevel.checkpoint()
            return
        params: dict[str, Any] = {"level": name, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.handler.notify("notifications/message", params)

    def detach_for_background(
        self, fn: Callable[[BackgroundContext, *Ts], Awaitable[object]], *args: *Ts
    ) -> None:
        """Hand ``fn(background_ctx, *args)`` to the session; it outlives this request."""
        detach_for_background(self.handler, fn, *args)

    async def begin_task(self, message: str | None = None) -> bool:
        """Continue as a task of the tasks extension (tools registered with
        ``task_handoff="explicit"``); ``False`` here: this call is not one that may
        become a task, and the body simply goes on as part of its request."""
        await trio.lowlevel.checkpoint()
        return False

    # -- reverse calls ------------------------------------------------------------
    def _missing(self, capability: str, required: dict[str, Any] | None = None) -> CapabilityError:
        """The error for a reverse call the client did not declare."""
        return CapabilityError(capability, required=required)

    async def _reverse(
        self, method: str, params: dict[str, Any] | None = None, key: str | None = None
    ) -> dict[str, Any]:
        """A reverse call: a live request in the handshake era, an input round (MRTR) in
        the stateless era, where the server never sends requests of its own. ``key``
        names the round's input request (the handshake era has no use for it)."""
        inputs = self.handler.extension
        if isinstance(inputs, InputRound):
            return await inputs.ask(method, params or {}, key)
        if self.session.stateless:
            # Only tools/call, prompts/get and resources/read may answer with input
            # requests, and a stateless-era server never sends requests of its own.
            raise McpError(
                INTERNAL_ERROR, f"{method}: this request cannot ask the client for input"
            )
        return await self.handler.request(method, params)

    async def sample(
        self,
        messages: str | Sequence[SamplingMessage],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        tools: Sequence[Tool] | None = None,
        tool_choice: ToolChoiceArg | None = None,
        key: str | None = None,
        **extra: Any,
    ) -> CreateMessageResult:
        """Ask the client's LLM for a completion (``sampling/createMessage``).

        ``messages`` may be a plain string (one user message). Further members of
        ``CreateMessageRequest`` (``modelPreferences``, ``includeContext`` ...) go in
        ``extra`` under their wire names. ``tools`` / ``tool_choice`` (2025-11-25) need
        the client's ``sampling.tools``: without it :class:`CapabilityError` is raised and
        nothing is sent; a conversation breaking the tool-use rules is a ``ValueError``.
        ``key`` names the input request in the stateless era (default: derived from
        the request's content).
        """
        if self.session.client_capabilities.sampling is None:
            raise self._missing("sampling")
        if isinstance(messages, str):
            messages = [SamplingMessage(role="user", content=TextContent(text=messages))]
        version = self.session.protocol_version
        params: dict[str, Any] = {
            "messages": fit_sampling_messages(version, [unstructure(m) for m in messages]),
            "maxTokens": max_tokens,
        }
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        if stop_sequences is not None:
            params["stopSequences"] = list(stop_sequences)
        params.update(extra)
        params.update(sampling_tools_params(self.session, messages, tools, tool_choice, extra))
        result = await self._reverse("sampling/createMessage", params, key)
        return structure(result, CreateMessageResult)

    @overload
    async def elicit(
        self, message: str, schema: type[T], *, key: str | None = None
    ) -> tuple[ElicitResult, T | None]: ...
    @overload
    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> tuple[ElicitResult, dict[str, Any] | None]: ...
    async def elicit(
        self, message: str, schema: Any, *, key: str | None = None
    ) -> tuple[ElicitResult, Any]:
        """Ask the user for structured input (``elicitation/create``, form mode).

        ``schema`` is an attrs class (its JSON Schema is sent, and accepted content is
        structured into it) or a JSON Schema object sent as it is. Returns the raw
        :class:`ElicitResult` and the content: the typed object (or ``dict``) when the
        user accepted, else ``None``. ``key`` names the input request in the
        stateless era (default: derived from the request's content).
        """
        missing = form_elicitation_error(self.session)
        if missing is not None:
            raise missing
        typed = isinstance(schema, type)
        requested = json_schema_for(schema) if typed else dict(schema)
        if typed:  # a form schema is the spec's restricted subset; unknown keys are still
            requested.pop("additionalProperties", None)  # refused when read back
        requested = fit_requested_schema(self.session.protocol_version, requested)
        raw = await self._reverse(
            "elicitation/create",
            {"mode": "form", "message": message, "requestedSchema": requested}
            if self._form_mode_member()
            else {"message": message, "requestedSchema": requested},
            key,
        )
        result = structure(raw, ElicitResult)
        if result.action != "accept" or result.content is None:
            return result, None
        return result, (structure(result.content, schema) if typed else dict(result.content))

    def _form_mode_member(self) -> bool:
        # ``mode`` exists from 2025-11-25 on; older clients would see an unknown member.
        return self.session.protocol_version == "2025-11-25"

    async def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None
    ) -> tuple[ElicitResult, str | None]:
        """Send the user to ``url`` out of band (URL-mode elicitation, 2025-11-25+).

        Returns the client's answer (``accept`` is consent to open the URL, not that the
        work there is done) and the ``elicitationId`` sent (generated unless given; none
        in the stateless era), for :meth:`complete_elicitation` later. Raises
        :class:`CapabilityError` when the client did not declare ``elicitation.url``.
        """
        params = url_elicitation_params(self.session, message, url, elicitation_id)
        raw = await self._reverse("elicitation/create", unstructure(params))
        return parse_elicit_result(raw), params.elicitation_id

    def url_elicitation_required(
        self, message: str, url: str, *, elicitation_id: str | None = None
    ) -> UrlElicitationRequiredError:
        """The ``-32042`` error to ``raise`` when this request needs the user at ``url``
        first (2025-11-25, clients that declared ``elicitation.url``)."""
        return url_elicitation_required(self.session, message, url, elicitation_id)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Send ``notifications/elicitation/complete`` for ``elicitation_id``."""
        await complete_elicitation(self.handler, elicitation_id)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (``roots/list``); ``key`` names the input request in the
        stateless era."""
        if self.session.client_capabilities.roots is None:
            raise self._missing("roots")
        raw = await self._reverse("roots/list", None, key)
        roots = raw.get("roots")
        if not isinstance(roots, list):
            raise McpError(-32603, "roots/list answer has no roots list")
        return [structure(item, Root) for item in roots]

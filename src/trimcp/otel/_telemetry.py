"""``Telemetry``: spans and metrics for every request of the sessions it instruments.

``Telemetry`` is a :class:`~trimcp.dispatch.SessionMiddleware` that takes no place in
the message chain: bound to a session, it becomes the session's
:class:`~trimcp.nursery.RequestObserver`. So an uninstrumented session pays nothing,
and an instrumented one pays per request, never per message.

* **Inbound** (a server's requests, a client's reverse calls): a ``SERVER`` span whose
  parent is the trace context the caller put in ``params._meta`` (``traceparent``,
  ``tracestate``, ``baggage``: SEP-414 and the MCP conventions), made current in the
  request's own task, so the handler's own spans and its reverse calls are its children.
* **Outbound** (calls, and reverse calls from a handler): a ``CLIENT`` span, child of
  the caller's current span; its context is injected into ``params._meta`` with the
  configured propagator, over every transport alike.
* **Outcome**: ``ok``; ``error`` (``error.type`` and ``rpc.response.status_code`` are
  the JSON-RPC code, the status description its message); ``tool_error`` (a
  ``tools/call`` result with ``isError``); ``timeout`` (the handler deadline, or no
  answer in time); ``cancelled`` (an ``mcp.cancelled`` event says by whom:
  ``peer``, ``caller`` or ``session_ended``); ``connection_closed``.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Final, Unpack, final

import attrs
import trio
from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import SpanKind, Status, StatusCode

from trimcp.dispatch import (
    ConnectionClosedError,
    McpError,
    Middlewares,
    RequestTimeoutError,
)
from trimcp.nursery import HandlerContext, OutboundCall, RequestOptions, Role, Session
from trimcp.wire import REQUEST_TIMEOUT, ErrorResponse, Message, Response

from . import _names as n
from ._metrics import DIRECTION, Instruments

__all__ = ["Telemetry"]

_SCOPE: Final = "trimcp"
_ids = itertools.count(1)


@attrs.define
class _SessionInfo:
    started: float
    attributes: dict[str, Any]


@final
class Telemetry:
    """Traces and metrics for the sessions it is installed on; see the module doc.

    Args:
      tracer_provider: where spans go (default: the global provider that
        ``opentelemetry-sdk`` or a distro configured; with none configured, the API's
        no-op one).
      meter_provider: where measurements go (default: the global provider, likewise).
      propagator: how trace context is written into and read from ``params._meta``
        (default: the global propagator, W3C Trace Context and Baggage).

    Install it with :meth:`instrument` on a server's or a client's
    :class:`~trimcp.dispatch.Middlewares`. One session has one observer.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        propagator: TextMapPropagator | None = None,
    ) -> None:
        from trimcp import __version__

        self._tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider)
        meter = metrics.get_meter(_SCOPE, __version__, meter_provider)
        self._sessions: weakref.WeakKeyDictionary[Session, _SessionInfo] = (
            weakref.WeakKeyDictionary()
        )
        self._instruments = Instruments(meter, self._sessions)
        self._propagator = propagator

    def instrument(self, middlewares: Middlewares) -> Middlewares:
        """Watch every session composed from ``middlewares`` (either role); returns it."""
        for stack in (middlewares.server_recv, middlewares.client_recv):
            if self not in stack:
                stack.add(self)
        return middlewares

    # ------------------------------------------------------------------ binding
    def bind(self, session: Session) -> None:
        """Become ``session``'s observer (no message middleware: returns ``None``)."""
        if session.observer is not None and session.observer is not self:
            raise ValueError("this session already has a request observer")
        session.observer = self
        attributes = n.transport_attributes(session)
        attributes[n.LOCAL_SESSION] = f"{next(_ids)}"
        self._sessions[session] = _SessionInfo(trio.current_time(), attributes)

    def ended(self, session: Session) -> None:
        info = self._sessions.pop(session, None)
        if info is None:
            return
        attributes = _public(info.attributes)
        version = session.state.protocol_version
        if version is not None:
            attributes[n.PROTOCOL_VERSION] = version
        duration = trio.current_time() - info.started
        self._instruments.session[session.role].record(duration, attributes)

    # ------------------------------------------------------------------ inbound
    def inbound(self, ctx: HandlerContext) -> _Inbound:
        session = ctx.session_object
        name, attributes = n.describe_request(ctx.method, ctx.params)
        attributes[n.REQUEST_ID] = str(ctx.request_id)
        info = self._sessions.get(session)
        if info is not None:
            attributes.update(info.attributes)
        carrier = {k: v for k, v in ctx.meta.items() if isinstance(v, str)}
        parent = self._extract(carrier)
        span = self._tracer.start_span(
            name, context=parent, kind=SpanKind.SERVER, attributes=attributes
        )
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        return _Inbound(self, ctx, span, token, attributes)

    def _extract(self, carrier: dict[str, str]) -> otel_context.Context:
        if self._propagator is not None:
            return self._propagator.extract(carrier, context=otel_context.Context())
        return propagate.extract(carrier, context=otel_context.Context())

    # ------------------------------------------------------------------ outbound
    async def outbound(
        self,
        session: Session,
        send: OutboundCall,
        method: str,
        params: dict[str, Any] | None,
        **options: Unpack[RequestOptions],
    ) -> dict[str, Any]:
        name, attributes = n.describe_request(method, params)
        info = self._sessions.get(session)
        if info is not None:
            attributes.update(info.attributes)
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        carrier: dict[str, str] = {}
        span_context = trace.set_span_in_context(span)
        if self._propagator is not None:
            self._propagator.inject(carrier, context=span_context)
        else:
            propagate.inject(carrier, context=span_context)
        if carrier:
            params = dict(params or {})
            meta = params.get("_meta")
            params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **carrier}
        started = trio.current_time()
        outcome: Outcome = Outcome("ok")
        try:
            result = await send(method, params, **options)
            outcome = _result_outcome(method, result)
            return result
        except RequestTimeoutError as exc:
            outcome = Outcome("timeout", "timeout", str(exc.code), exc.message)
            raise
        except ConnectionClosedError as exc:
            outcome = Outcome("connection_closed", "connection_closed", None, exc.message)
            raise
        except McpError as exc:
            kind = "timeout" if exc.code == REQUEST_TIMEOUT else "error"
            outcome = Outcome(kind, str(exc.code), str(exc.code), exc.message)
            raise
        except trio.Cancelled:
            reason = "session_ended" if session.is_closed else "caller"
            outcome = Outcome("cancelled", cancel_reason=reason)
            raise
        except BaseException as exc:
            outcome = Outcome("error", type(exc).__qualname__, None, None)
            raise
        finally:
            self._finish(span, session, Role.CLIENT, method, attributes, started, outcome)

    # ------------------------------------------------------------------ the end
    def _finish(
        self,
        span: trace.Span,
        session: Session,
        role: Role,
        method: str,
        attributes: dict[str, Any],
        started: float,
        outcome: Outcome,
        state_of: HandlerContext | None = None,
    ) -> None:
        state = state_of.session if state_of is not None else session.state
        era = "stateless" if state.stateless else "handshake"
        ended: dict[str, Any] = {n.OUTCOME: outcome.kind, n.ERA: era}
        if state.protocol_version is not None:
            ended[n.PROTOCOL_VERSION] = state.protocol_version
        if outcome.error_type is not None:
            ended[n.ERROR_TYPE] = outcome.error_type
        if outcome.status_code is not None:
            ended[n.STATUS_CODE] = outcome.status_code
        span.set_attributes(ended)
        direction = "inbound" if role is Role.SERVER else "outbound"
        if outcome.kind == "cancelled":
            span.add_event("mcp.cancelled", {n.CANCEL_REASON: outcome.cancel_reason or "peer"})
            self._instruments.cancelled.add(1, {n.METHOD: method, DIRECTION: direction})
        elif outcome.error_type is not None:
            span.set_status(Status(StatusCode.ERROR, outcome.description))
            self._instruments.errors.add(
                1,
                {n.METHOD: method, n.ERROR_TYPE: outcome.error_type, DIRECTION: direction},
            )
        span.end()
        measured = _public({**attributes, **ended})
        measured.pop(n.REQUEST_ID, None)
        measured.pop(n.SESSION_ID, None)
        measured.pop(n.RESOURCE_URI, None)  # opt-in in the conventions: high cardinality
        self._instruments.operation[role].record(trio.current_time() - started, measured)


@attrs.frozen
class Outcome:
    """How one request ended, in the conventions' terms."""

    kind: str
    error_type: str | None = None
    status_code: str | None = None
    description: str | None = None
    cancel_reason: str | None = None


@final
class _Inbound:
    """The open span of one inbound request (an :class:`~trimcp.nursery.InboundWatch`)."""

    __slots__ = ("_attributes", "_ctx", "_span", "_started", "_telemetry", "_token")

    def __init__(
        self,
        telemetry: Telemetry,
        ctx: HandlerContext,
        span: trace.Span,
        token: object,
        attributes: dict[str, Any],
    ) -> None:
        self._telemetry = telemetry
        self._ctx = ctx
        self._span = span
        self._token = token
        self._attributes = attributes
        self._started = trio.current_time()

    def finished(self, reply: Message | None) -> None:
        ctx = self._ctx
        session = ctx.session_object
        if reply is None:
            # Who cancelled it first: a peer's cancellation seen before the session
            # ended is the peer's, however long the handler then took to unwind.
            reason = session.cancelled_by(ctx.request_id)
            if reason is None:
                reason = "session_ended" if session.is_closed else "peer"
            outcome = Outcome("cancelled", cancel_reason=reason)
        elif isinstance(reply, ErrorResponse):
            code = reply.error.code
            kind = "timeout" if code == REQUEST_TIMEOUT else "error"
            outcome = Outcome(kind, str(code), str(code), reply.error.message)
        elif isinstance(reply, Response):
            outcome = _result_outcome(ctx.method, reply.result)
        else:  # pragma: no cover - the session answers with nothing else
            outcome = Outcome("ok")
        try:
            self._telemetry._finish(
                self._span,
                session,
                Role.SERVER,
                ctx.method,
                self._attributes,
                self._started,
                outcome,
                state_of=ctx,
            )
        finally:
            otel_context.detach(self._token)  # type: ignore[arg-type]


def _result_outcome(method: str, result: dict[str, Any]) -> Outcome:
    if method == "tools/call" and result.get("isError") is True:
        return Outcome("tool_error", "tool_error", None, "the tool reported an error")
    return Outcome("ok")


def _public(attributes: dict[str, Any]) -> dict[str, Any]:
    """Attributes without trimcp's per-session id (unbounded: spans only)."""
    return {k: v for k, v in attributes.items() if k != n.LOCAL_SESSION}

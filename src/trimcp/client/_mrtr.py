"""Multi round-trip requests (MRTR, 2026-07-28) on the client: answering input rounds.

A stateless-era server never sends the client a request. A ``tools/call``,
``prompts/get`` or ``resources/read`` that needs the client's LLM, user or roots is
answered with an ``InputRequiredResult`` (``resultType: "input_required"``): keyed
``inputRequests`` and an opaque ``requestState``. :class:`InputRounds` then

1. fulfils every input request of the round, concurrently, through the **same
   handlers** the client registered for live reverse calls (``sampling``,
   ``elicitation``, ``roots`` of ``open_client``), each in a handler context of its
   own, so one handler serves both eras;
2. retries the original request with a **new id**, the original params plus
   ``inputResponses`` (this round's answers) and ``requestState`` echoed byte for byte
   (and none when the server sent none); nothing of it leaks into other requests,
   since each call builds its own params;
3. repeats while the server asks for more, at most ``max_rounds`` times
   (:data:`DEFAULT_MAX_INPUT_ROUNDS`); past that :class:`InputRoundsExceeded` is raised.

A ``tools/call`` refused with ``-32020`` (its ``Mcp-Param-*`` headers do not match the
server's idea of the tool) is retried once after re-reading ``tools/list`` (``refresh``).

A result without ``resultType`` is complete, as the spec says of older servers. An
input request the client has no handler for (the server asked for a capability that
was not declared) raises ``McpError(-32601)``; a handler's own error propagates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, final

import trio

from trimcp.binding import structure, unstructure
from trimcp.dispatch import McpError, ProgressCallback
from trimcp.nursery import HandlerContext, Session, unwrap_single
from trimcp.wire import HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

__all__ = [
    "DEFAULT_MAX_INPUT_ROUNDS",
    "INPUT_METHODS",
    "MAX_INPUT_REQUESTS",
    "InputRounds",
    "InputRoundsExceeded",
]

DEFAULT_MAX_INPUT_ROUNDS: Final = 16
"""Input rounds one call may take before the client gives up on the server."""

MAX_INPUT_REQUESTS: Final = 64
"""Input requests one round may carry (more is refused as a misbehaving server)."""

INPUT_METHODS: Final = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
"""What an ``InputRequiredResult`` may ask for."""

_RETRY_KEYS: Final = ("inputResponses", "requestState")


class InputRoundsExceeded(McpError):
    """The server asked for input more than ``max_rounds`` times for one call."""

    def __init__(self, method: str, rounds: int) -> None:
        super().__init__(
            INTERNAL_ERROR,
            f"{method}: the server still asked for input after {rounds} rounds "
            "(raise max_input_rounds on open_client if that is expected)",
        )


def _input_requests(raw: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    found = raw.get("inputRequests") or {}
    if not isinstance(found, dict):
        raise McpError(INVALID_PARAMS, "inputRequests is not an object")
    if len(found) > MAX_INPUT_REQUESTS:
        raise McpError(INVALID_PARAMS, f"more than {MAX_INPUT_REQUESTS} input requests")
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for key, request in found.items():
        method = request.get("method") if isinstance(request, dict) else None
        if method not in INPUT_METHODS:
            raise McpError(INVALID_PARAMS, f"input request {key!r}: unsupported method {method!r}")
        params = request.get("params") or {}
        if not isinstance(params, dict):
            raise McpError(INVALID_PARAMS, f"input request {key!r}: params is not an object")
        out[key] = (method, params)
    return out


@final
class InputRounds:
    """Sends MRTR-capable requests and answers their input rounds (see the module doc)."""

    def __init__(
        self,
        session: Session,
        max_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        *,
        stateless: bool = True,
    ) -> None:
        if max_rounds < 0:
            raise ValueError("max_rounds must be at least 0")
        self.session = session
        #: The session speaks the stateless era (input rounds are possible).
        self.stateless = stateless
        self.max_rounds = max_rounds
        #: Called once when a ``tools/call`` gets ``-32020`` (HeaderMismatch), before the
        #: one retry: the client re-reads ``tools/list`` so that its ``Mcp-Param-*``
        #: headers follow the tool's current schema, as the spec recommends.
        self.refresh: Callable[[], Awaitable[object]] | None = None

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Awaitable[dict[str, Any]]:
        """Send ``method``; its complete result after any input rounds, to await.

        Input rounds and the header-mismatch retry belong to the stateless era; in the
        handshake era this is the session's own request, so a waiting call keeps no
        frame of this layer alive.
        """
        if not self.stateless:
            return self.session.request(method, params, timeout=timeout, on_progress=on_progress)
        return self._rounds(method, params, timeout, on_progress)

    async def _rounds(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> dict[str, Any]:
        original = {k: v for k, v in (params or {}).items() if k not in _RETRY_KEYS}
        current = original
        rounds = 0
        refreshed = False
        while True:
            try:
                raw = await self.session.request(
                    method, current, timeout=timeout, on_progress=on_progress
                )
            except McpError as exc:
                mismatch = exc.code == HEADER_MISMATCH and method == "tools/call"
                if not mismatch or refreshed or self.refresh is None:
                    raise
                refreshed = True
                await self.refresh()
                continue
            if raw.get("resultType", "complete") != "input_required":
                return raw
            if rounds >= self.max_rounds:
                raise InputRoundsExceeded(method, rounds)
            rounds += 1
            answers = await self.fulfil(_input_requests(raw))
            current = dict(original)
            if answers:
                current["inputResponses"] = answers
            state = raw.get("requestState")
            if state is not None:
                if not isinstance(state, str):
                    raise McpError(INVALID_PARAMS, "requestState is not a string")
                current["requestState"] = state

    async def fulfil(self, requests: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        """Answer every input request of one round, concurrently."""
        answers: dict[str, Any] = {}

        async def answer(key: str, method: str, params: dict[str, Any]) -> None:
            answers[key] = await self._run(key, method, params)

        with unwrap_single():  # one failing handler raises as itself
            async with trio.open_nursery() as nursery:
                for key, (method, params) in requests.items():
                    nursery.start_soon(answer, key, method, params)
        return answers

    async def _run(self, key: str, method: str, params: dict[str, Any]) -> Any:
        route = self.session.registry.route(method)
        if route is None:
            raise McpError(
                METHOD_NOT_FOUND,
                f"the server asked for {method}, which this client has no handler for",
            )
        meta = params.get("_meta")
        with trio.CancelScope() as scope:
            ctx = HandlerContext(
                self.session,
                f"input:{key}",
                method,
                params,
                meta if isinstance(meta, dict) else {},
                scope,
            )
            try:
                if route.params_type is not None:
                    try:
                        ctx.params = structure(params, route.params_type)
                    except Exception as exc:
                        raise McpError(
                            INVALID_PARAMS, f"input request {key!r} ({method}) is invalid: {exc}"
                        ) from None
                result = await route.handler(ctx, ctx.params)
            finally:
                ctx._close()
        if scope.cancelled_caught:
            raise McpError(INVALID_PARAMS, f"the {method} handler cancelled its own request")
        return result if type(result) is dict else ({} if result is None else unstructure(result))

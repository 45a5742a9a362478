"""The protocol era a run speaks, and what the raw clients need to speak the stateless one.

MCP has two eras: the handshake era (``initialize``, then a session; 2024-11-05 to
2025-11-25) and the stateless era (2026-07-28: no ``initialize``, every request carries
its protocol version, client info and capabilities in ``params._meta``; a server that
needs the client's LLM answers with an ``input_required`` result and the client retries
the call with ``inputResponses``). A benchmark run measures one era (``--era``); every
sample records it.

The raw clients (:mod:`._ndjson`, :mod:`._h11`) use :func:`stamp`, :func:`http_headers`
and :func:`with_input_rounds` here, so that what they send in the stateless era is
written once. The floor speaks no MCP and so has no era (:data:`ERA_FREE`): it runs the
same in every era's block, as the common baseline.

A driver that cannot do a metric in an era raises :class:`Unsupported` from the target's
function; the metric turns that into the sample ``{"unsupported": reason}``, never into
a run of another era.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ._core import Target

__all__ = [
    "DEFAULT_ERA",
    "ERAS",
    "ERA_FREE",
    "MAX_INPUT_ROUNDS",
    "SAMPLING_ANSWER",
    "SDK_NO_BACK_CHANNEL",
    "STATELESS_VERSION",
    "Unsupported",
    "guard_fanout",
    "http_headers",
    "refused_as_unsupported",
    "sdk_mode",
    "stamp",
    "stateless_meta",
    "unsupported_in",
    "with_input_rounds",
]

ERAS: Final = ("handshake", "stateless")
DEFAULT_ERA: Final = "handshake"
#: The stateless-era revision the raw clients speak.
STATELESS_VERSION: Final = "2026-07-28"
#: Implementations with no MCP, hence no era: labelled so in the report.
ERA_FREE: Final = frozenset({"floor", "floor-objects", "floor-hypercorn"})
#: Input rounds the raw clients answer for one call before calling the server broken.
MAX_INPUT_ROUNDS: Final = 16

#: The reserved ``_meta`` keys of a 2026-07-28 request.
_VERSION = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_INFO = "io.modelcontextprotocol/clientInfo"
#: The params member each method's ``Mcp-Name`` header carries.
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: The completion the raw clients answer every sampling request with.
SAMPLING_ANSWER: Final = {
    "role": "assistant",
    "content": {"type": "text", "text": "ok"},
    "model": "x",
}


class Unsupported(Exception):
    """A target cannot do this in this era; the message says why (it becomes the
    sample's ``unsupported`` reason)."""


#: Why the SDK's server cannot fan out in 2026-07-28 mode.
SDK_NO_BACK_CHANNEL: Final = (
    "the SDK's server makes no server-to-client requests in 2026-07-28 mode "
    "(create_message raises NoBackChannelError)"
)

Fanout = Callable[[int], Awaitable[None]]


def refused_as_unsupported(
    fanout: Fanout, refusal: type[BaseException], why: str, *, single_too: bool = False
) -> Fanout:
    """``fanout``, but a ``refusal`` of a fan-out above one call raises
    :class:`Unsupported` (``why`` and the server's answer). A single call that fails
    stays an error (a broken target, not an unsupported shape) unless ``single_too``:
    the server cannot make even one reverse call in this era."""

    async def guarded(n: int) -> None:
        try:
            await fanout(n)
        except refusal as exc:
            if n <= 1 and not single_too:
                raise
            raise Unsupported(f"{why}; fan-out of {n}: {str(exc)[:120]}") from exc

    return guarded


_REFUSALS: Final = {"sdk": (SDK_NO_BACK_CHANNEL, True)}


def guard_fanout(target: Target, server: str | None, refusal: type[BaseException]) -> Target:
    """In the stateless era, ``target`` with its fan-out wrapped by
    :func:`refused_as_unsupported`, with the reason known for ``server`` (``trimcp``,
    ``sdk``; ``None``: an external server, whose refusal is reported as its own)."""
    if target.fanout is None:
        return target
    why, single_too = _REFUSALS.get(
        server or "", ("the server refused the stateless-era fan-out", False)
    )
    target.fanout = refused_as_unsupported(target.fanout, refusal, why, single_too=single_too)
    return target


def unsupported_in(exc: BaseException) -> Unsupported | None:
    """The :class:`Unsupported` that ``exc`` is or holds (task groups wrap what a
    target raises inside a driver), else ``None``."""
    if isinstance(exc, Unsupported):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = unsupported_in(inner)
            if found is not None:
                return found
    return None


def sdk_mode(era: str) -> str:
    """The ``mode`` of the SDK's ``Client`` for ``era``: its handshake path, or the
    2026-07-28 revision pinned (no ``server/discover`` probe, like trimcp's explicit era)."""
    return "legacy" if era == DEFAULT_ERA else STATELESS_VERSION


def stateless_meta() -> dict[str, Any]:
    """The ``_meta`` every raw stateless-era request carries (sampling declared, as the
    fan-out metric's reverse calls need)."""
    return {
        _VERSION: STATELESS_VERSION,
        _CAPABILITIES: {"sampling": {}},
        _INFO: {"name": "trimcp-bench", "version": "1.0"},
    }


def stamp(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the stateless-era ``_meta`` (a copy; members already there win)."""
    existing = params.get("_meta")
    meta = {**stateless_meta(), **(existing if isinstance(existing, dict) else {})}
    return {**params, "_meta": meta}


def _header_value(value: str) -> str:
    """Plain when header-safe, else ``=?base64?...?=`` (the 2026-07-28 encoding)."""
    plain = value.isascii() and value.isprintable() and value == value.strip()
    if plain and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="


def http_headers(method: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    """The headers a stateless-era POST of ``method`` carries: the version, ``Mcp-Method``
    and, for the methods that name a target, ``Mcp-Name``."""
    headers = [("mcp-protocol-version", STATELESS_VERSION), ("mcp-method", method)]
    key = _NAME_PARAM.get(method)
    name = params.get(key) if key else None
    if isinstance(name, str):
        headers.append(("mcp-name", _header_value(name)))
    return headers


Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _input_response(key: str, request: Any) -> dict[str, Any]:
    method = request.get("method") if isinstance(request, dict) else None
    if method != "sampling/createMessage":
        raise AssertionError(f"input request {key!r}: the raw client answers only sampling")
    return SAMPLING_ANSWER


async def with_input_rounds(
    request: Request, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Send ``method`` through ``request`` (which stamps it); while the answer is an
    ``input_required`` result, answer its sampling requests and retry with
    ``inputResponses`` and the ``requestState`` echoed. Returns the final JSON-RPC answer.
    """
    current = params
    for _ in range(MAX_INPUT_ROUNDS + 1):
        answer = await request(method, current)
        result = answer.get("result")
        if not isinstance(result, dict) or result.get("resultType") != "input_required":
            return answer
        asked = result.get("inputRequests") or {}
        current = {**params, "inputResponses": {k: _input_response(k, r) for k, r in asked.items()}}
        if "requestState" in result:
            current["requestState"] = result["requestState"]
    raise AssertionError(f"{method}: still input_required after {MAX_INPUT_ROUNDS} rounds")

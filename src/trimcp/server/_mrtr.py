"""Multi round-trip requests (MRTR, 2026-07-28): reverse calls without server requests.

In the stateless era the server never sends a request. A tool that needs the client's
LLM, user or roots answers its ``tools/call`` with an ``InputRequiredResult``: the
inputs it needs (``inputRequests``, keyed) and an opaque ``requestState``. The client
fulfils them and retries the same call, with a new id, carrying ``inputResponses`` and
the state back.

trimcp keeps tool bodies era-blind: ``await ctx.elicit(...)`` is the same line in both
eras. In the stateless era each round re-runs the handler from the top with an
:class:`InputRound` on its context:

* a reverse call whose answer is known (from an earlier round, sealed in the state, or
  from this retry's ``inputResponses``, checked against the request it answers) returns
  it at once;
* the first unanswered one records its request and ends the run with
  :class:`InputRequired`. Reverse calls running concurrently (a nursery) get one
  scheduling pass to record theirs too, so they all go out in one round.

A key is the one the handler names (``ctx.elicit(..., key="user_name")``), or else is
derived from the call's content (method and params, canonical JSON) plus an occurrence
counter, so the same call gets the same key in every run, whatever order concurrent
calls happen to be scheduled in. The sealed state records the answers so far; it is
bound to the method, the target (tool name, prompt name or resource uri) and a digest
of the arguments, and expires (see :class:`~trimcp.server.RequestStateSealer`), so a
client can neither forge it nor replay it onto another call.

A response in ``inputResponses`` is taken only when the handler asks for its key, and
is then checked against the method asked (an invalid one is ``-32602``); responses for
keys nobody asks for are ignored, as the spec asks. Answers are the client's own, so a
response is trusted as much with a state as without one: what the state protects is
the server's record of earlier rounds, and that a retry belongs to this very call.

Consequence for handler authors: code before a reverse call runs once per round, so it
should be free of side effects or idempotent (the same advice as for any retried
request); what happens after the last reverse call runs once.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, Final, final

import trio

from trimcp.binding import structure
from trimcp.dispatch import McpError
from trimcp.protocol import CreateMessageResult, ElicitResult, Root
from trimcp.wire import INVALID_PARAMS

__all__ = [
    "INPUT_METHODS",
    "MRTR_METHODS",
    "InputRequired",
    "InputRound",
    "check_response",
    "only_input_required",
    "strip_input_required",
]

MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
"""The only requests the spec lets a server answer with an ``InputRequiredResult``."""

INPUT_METHODS: Final = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
"""The requests an ``InputRequiredResult`` may ask the client to fulfil."""

MAX_INPUTS_PER_ROUND: Final = 32
"""Bound on the input requests one round carries. A run that asks for more sends the
first ones; the rest are asked again when the handler re-runs with those answers, so a
fan-out of 100 reverse calls takes four rounds instead of one unbounded one."""


class InputRequired(BaseException):
    """Raised inside a handler run by a reverse call that has no answer yet.

    A ``BaseException`` so that a handler's own ``except Exception`` does not swallow
    it: the run must end so the round's requests can go to the client.
    """


def _digest(method: str, params: dict[str, Any]) -> str:
    text = json.dumps([method, params], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_PREFIX: Final = {
    "sampling/createMessage": "sample",
    "elicitation/create": "elicit",
    "roots/list": "roots",
}


@final
class InputRound:
    """The input bookkeeping of one run of a stateless-era handler.

    Args:
      answers: the answers of earlier rounds, by key (checked when they were given).
      offered: this retry's ``inputResponses``, by key (checked when asked for).
    """

    def __init__(
        self, answers: dict[str, Any] | None = None, offered: dict[str, Any] | None = None
    ) -> None:
        self.answers: dict[str, Any] = dict(answers or {})
        self.offered: dict[str, Any] = dict(offered or {})
        #: What this run asked for and did not get: key -> ``{"method", "params"}``.
        self.requests: dict[str, dict[str, Any]] = {}
        self._seen: Counter[str] = Counter()
        self._used: set[str] = set()

    def key_for(self, method: str, params: dict[str, Any]) -> str:
        digest = _digest(method, params)
        self._seen[digest] += 1
        return f"{_PREFIX.get(method, 'input')}-{digest}-{self._seen[digest]}"

    async def ask(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """The answer to reverse call ``method`` (raises :class:`InputRequired` if none).

        ``key`` names the input request; a key used twice in one run is a handler bug
        (``ValueError``), since the client could answer only one of them.
        """
        if method not in INPUT_METHODS:
            raise McpError(
                INVALID_PARAMS,
                f"{method} cannot be asked of a stateless-era client (only "
                "sampling/createMessage, elicitation/create and roots/list)",
            )
        if key is None:
            key = self.key_for(method, params)
        elif not key or key in self._used:
            raise ValueError(f"input key {key!r} is empty or used twice in one run")
        self._used.add(key)
        answer = self.answers.get(key)
        if answer is not None:
            return dict(answer)
        if key in self.offered:
            answer = check_response(method, self.offered[key])
            self.answers[key] = answer
            return dict(answer)
        if len(self.requests) < MAX_INPUTS_PER_ROUND:
            self.requests[key] = {"method": method, "params": params}
        # else: the round is full; this call is asked again in a later round.
        # One scheduling pass, shielded, so that concurrent reverse calls of the same
        # handler record their requests too before the run ends.
        await trio.lowlevel.cancel_shielded_checkpoint()
        raise InputRequired(key)

    def result(self, request_state: str) -> dict[str, Any]:
        """The ``InputRequiredResult`` of this run."""
        return {
            "resultType": "input_required",
            "inputRequests": dict(self.requests),
            "requestState": request_state,
        }


def check_response(method: str, response: Any) -> dict[str, Any]:
    """Validate one input response against the request it answers (``-32602`` if not)."""
    if not isinstance(response, dict):
        raise McpError(INVALID_PARAMS, f"Invalid params: the response to {method} is not an object")
    try:
        if method == "elicitation/create":
            structure(response, ElicitResult)
        elif method == "sampling/createMessage":
            structure(response, CreateMessageResult)
        else:
            roots = response.get("roots")
            if not isinstance(roots, list):
                raise ValueError("roots is not a list")
            for root in roots:
                structure(root, Root)
    except McpError:
        raise
    except Exception as exc:
        raise McpError(
            INVALID_PARAMS, f"Invalid params: invalid input response to {method}: {exc}"
        ) from None
    return response


def only_input_required(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`InputRequired`, alone or in a group of them."""
    if isinstance(exc, InputRequired):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(only_input_required(inner) for inner in exc.exceptions)
    return False


def strip_input_required(exc: BaseException) -> BaseException:
    """``exc`` without its :class:`InputRequired` parts: when a run ends with input
    requests *and* a real error (concurrent reverse calls in a nursery), the error is
    the outcome. A group left with one exception gives that exception itself."""
    if not isinstance(exc, BaseExceptionGroup):
        return exc
    _, rest = exc.split(InputRequired)
    if rest is None:  # pragma: no cover - only_input_required covers it
        return exc
    while isinstance(rest, BaseExceptionGroup) and len(rest.exceptions) == 1:
        rest = rest.exceptions[0]
    return rest

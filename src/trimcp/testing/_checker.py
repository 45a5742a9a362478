"""The protocol model: what was sent, what is owed, and a check of everything received.

:class:`Checker` is told about every frame the peer sends (:meth:`Checker.sent`) and
fed every :class:`Inbound` the server sends back (:meth:`Checker.receive`), in arrival
order. It raises a :class:`Violation` the moment something breaks a property, and
:meth:`Checker.overdue` reports requests left without an answer. It is pure bookkeeping
(no I/O), so the same model serves every transport and every replay.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import attrs

from ._frames import Expect, Frame, valid_id
from ._inbox import Inbound
from ._schemas import method_table, schema_errors
from ._violations import violation

__all__ = ["Checker", "Pending"]

Id = str | int
#: Reverse requests and the client capability each needs.
NEEDS_CLIENT = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}
#: Server notifications and the server capability path each needs.
NEEDS_SERVER = {
    "notifications/message": ("logging",),
    "notifications/tools/list_changed": ("tools", "listChanged"),
    "notifications/prompts/list_changed": ("prompts", "listChanged"),
    "notifications/resources/list_changed": ("resources", "listChanged"),
    "notifications/resources/updated": ("resources", "subscribe"),
}
#: Epochs (barriers) after a cancellation by which its work must have stopped.
CANCEL_GRACE = 2


#: Seconds a request may go unanswered unless told otherwise (``Options``).
DEFAULT_TIMEOUT = 5.0


@attrs.define
class Pending:
    """One frame sent and what is owed for it.

    ``timeout``: seconds of silence allowed before an answer is overdue. Silence is
    counted from the last sign of life, ``alive_at``: the frame itself, then each
    progress notification for it (the spec lets progress reset a timeout).
    """

    index: int
    frame: Frame
    sent_at: float
    token: Id | None = None
    timeout: float = DEFAULT_TIMEOUT
    answers: int = 0
    cancelled_epoch: int | None = None
    last_progress: float | None = None
    progress_seen: int = 0
    value: Any = None
    overdue: bool = False
    alive_at: float | None = None

    @property
    def owed(self) -> bool:
        """An answer is due and has not come (nor been reported missing)."""
        owed = self.frame.expect.count == "one" and self.cancelled_epoch is None
        return owed and self.answers == 0 and not self.overdue

    def deadline(self, cap: float) -> float:
        """When its answer is overdue: ``timeout`` after its last sign of life, and no
        later than ``cap`` (or ``timeout``, if longer) after it was sent."""
        alive = self.sent_at if self.alive_at is None else self.alive_at
        return min(alive + self.timeout, self.sent_at + max(self.timeout, cap))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(raw: bytes) -> Any:
    """Strict JSON: UTF-8, no duplicate keys, no NaN or Infinity."""
    return json.loads(
        raw.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_constant
    )


def _null_id_error_problems(value: Any) -> list[str] | None:
    """Check an error response with a null id by JSON-RPC 2.0's rule (``None`` otherwise).

    JSON-RPC requires ``"id": null`` when the id of a bad message cannot be read, but the
    MCP schemas type every id as a string or integer; the JSON-RPC rule wins.
    """
    if not (isinstance(value, dict) and "id" in value and value["id"] is None and "error" in value):
        return None
    error = value["error"]
    problems = [] if value.get("jsonrpc") == "2.0" else ["jsonrpc must be '2.0'"]
    if set(value) - {"jsonrpc", "id", "error"}:
        problems.append(f"unexpected members {sorted(set(value) - {'jsonrpc', 'id', 'error'})}")
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        problems.append("error.message must be a string")
    elif not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
        problems.append("error.code must be an integer")
    return problems


def _capability(caps: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = caps
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return node is not None and node is not False


class Checker:
    """See the module docstring. ``version`` is the revision asked for (then negotiated)."""

    def __init__(self, version: str, client_capabilities: Mapping[str, Any]) -> None:
        self.version = version
        self.client_capabilities = dict(client_capabilities)
        self.server_capabilities: dict[str, Any] = {}
        self.initialized = False
        self.epoch = 0
        self.pending: dict[int, Pending] = {}
        self._by_id: dict[Id, int] = {}
        self._tokens: dict[Id, int] = {}
        self._reverse: dict[Id, str] = {}
        self._reverse_seen: set[Id] = set()
        self.subscribed: set[str] = set()
        #: The peer ended the session (disconnect): a request still running in it may
        #: be answered ``404``, the session being gone.
        self.ended = False

    # -- what the peer sent ---------------------------------------------------------
    def sent(
        self,
        index: int,
        frame: Frame,
        now: float,
        token: Id | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Pending:
        pending = Pending(index, frame, now, token, timeout)
        self.pending[index] = pending
        for request_id in frame.expect.ids:
            if request_id is not None:
                self._by_id[request_id] = index
        if token is not None:
            self._tokens[token] = index
        return pending

    def cancelled(self, request_id: Id) -> None:
        index = self._by_id.get(request_id)
        if index is not None and self.pending[index].cancelled_epoch is None:
            self.pending[index].cancelled_epoch = self.epoch

    def barrier(self) -> None:
        self.epoch += 1

    def settled(self) -> bool:
        """Every request that is owed an answer (and not cancelled) has one."""
        return not any(p.owed for p in self.pending.values())

    def next_deadline(self, cap: float) -> float:
        """The earliest moment an owed answer becomes overdue (``inf``: none is owed)."""
        return min((p.deadline(cap) for p in self.pending.values() if p.owed), default=math.inf)

    def overdue(self, now: float, cap: float) -> None:
        """Report the first request whose answer is overdue (see :meth:`Pending.deadline`)."""
        for p in self.pending.values():
            if p.owed and now >= p.deadline(cap):
                p.overdue = True  # reported once
                quiet = "" if p.alive_at is None else " after its last progress notification"
                raise violation(
                    "one-response",
                    f"no response within {p.timeout:g} s{quiet} to {p.frame.describe()}",
                )

    # -- what the server sent -------------------------------------------------------
    def receive(self, item: Inbound, now: float | None = None) -> tuple[Id, str] | None:
        """Check one item (received at ``now``, for progress as a sign of life); return
        ``(id, method)`` of a reverse request to answer."""
        if item.status is not None:
            self._http_status(item)
            return None
        try:
            value = parse(item.raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise violation(
                "schema", f"the server sent invalid JSON ({exc}): {item.raw[:200]!r}"
            ) from None
        errors = _null_id_error_problems(value)
        if errors is None:
            errors = schema_errors(self.version, "JSONRPCMessage", value)
        if errors:
            raise violation(
                "schema", f"not a {self.version} JSON-RPC message: {errors[:3]} in {value!r:.300}"
            )
        if "method" in value:
            if "id" in value:
                return self._server_request(value)
            self._notification(value, now)
            return None
        self._response(value, item.frame)
        return None

    def _find(self, value: Mapping[str, Any], frame: int | None) -> Pending:
        request_id = value.get("id")
        if request_id is None:
            candidates = [
                p
                for p in self.pending.values()
                if None in p.frame.expect.ids and p.answers == 0 and frame in (None, p.index)
            ]
            if not candidates:
                raise violation(
                    "ids", f"an error with a null id that answers nothing sent: {value!r:.300}"
                )
            return candidates[0]
        index = self._by_id.get(request_id)
        if index is None or (frame is not None and frame != index):
            raise violation(
                "ids", f"a response for id {request_id!r}, which is no request in flight"
            )
        return self.pending[index]

    def _response(self, value: Mapping[str, Any], frame: int | None) -> None:
        pending = self._find(value, frame)
        expect = pending.frame.expect
        if expect.count == "none":
            raise violation(
                "one-response",
                f"a response to a message that needs none: {pending.frame.describe()}",
            )
        if pending.answers:
            raise violation(
                "one-response", f"a second response for {pending.frame.describe()}: {value!r:.200}"
            )
        pending.answers += 1
        pending.value = value
        if "error" in value:
            self._error_code(expect, value["error"].get("code"), pending.frame)
            return
        if expect.must_error:
            raise violation(
                "error-codes", f"a success for a message that must fail: {pending.frame.describe()}"
            )
        if expect.method is not None:
            definition = method_table(self.version).results.get(expect.method)
            errors = schema_errors(self.version, definition, value["result"]) if definition else []
            if errors:
                raise violation(
                    "schema",
                    f"{expect.method} result is not a {definition}: {errors[:3]} in {value!r:.300}",
                )

    def _error_code(self, expect: Expect, code: Any, frame: Frame) -> None:
        if expect.codes is not None and code not in expect.codes:
            raise violation(
                "error-codes",
                f"error {code} where {list(expect.codes)} is due, for {frame.describe()}",
            )

    def _http_status(self, item: Inbound) -> None:
        status = item.status or 0
        pending = self.pending.get(item.frame) if item.frame is not None else None
        if status >= 500:
            raise violation(
                "http",
                f"HTTP {status} {item.raw[:200]!r}"
                + (f" for {pending.frame.describe()}" if pending else ""),
            )
        if pending is None:
            return
        expect = pending.frame.expect
        if status == 202:
            if expect.count == "one":
                raise violation("http", f"202 Accepted for a request: {pending.frame.describe()}")
            return
        if expect.count == "none":
            return
        if self.ended and status == 404 and not pending.answers:
            pending.answers += 1  # the request outlived the session the peer ended
            return
        if None not in expect.ids:
            raise violation(
                "http", f"HTTP {status} for a valid request: {pending.frame.describe()}"
            )
        if pending.answers:
            raise violation(
                "one-response", f"a second answer (HTTP {status}) for {pending.frame.describe()}"
            )
        pending.answers += 1
        try:
            body = parse(item.raw) if item.raw.strip() else None
        except (ValueError, UnicodeDecodeError):
            body = None
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            self._error_code(expect, body["error"].get("code"), pending.frame)

    def _server_request(self, value: Mapping[str, Any]) -> tuple[Id, str]:
        method, request_id = value["method"], value["id"]
        # Registered first: a request that breaks a rule below is still answered (and may
        # later be cancelled by the server), so it must be known.
        if not valid_id(request_id) or request_id in self._reverse:
            raise violation("ids", f"the server reused or mangled request id {request_id!r}")
        self._reverse[request_id] = method
        self._reverse_seen.add(request_id)
        table = method_table(self.version)
        if method not in table.server_requests:
            raise violation(
                "schema",
                f"the server sent a request {method!r} that {self.version} does not define",
            )
        errors = schema_errors(self.version, table.server_requests[method], value)
        if errors:
            raise violation("schema", f"{method} is not valid: {errors[:3]}")
        if not self.initialized and method != "ping":
            raise violation("initialization", f"the server sent {method} before initialization")
        needed = NEEDS_CLIENT.get(method)
        if needed is not None and needed not in self.client_capabilities:
            raise violation("capabilities", f"{method} without the client's {needed} capability")
        return request_id, method

    def answered(self, request_id: Id) -> None:
        self._reverse.pop(request_id, None)

    def _notification(self, value: Mapping[str, Any], now: float | None) -> None:
        method = value["method"]
        params = value.get("params") or {}
        definition = method_table(self.version).server_notifications.get(method)
        if definition is not None:
            errors = schema_errors(self.version, definition, value)
            if errors:
                raise violation("schema", f"{method} is not valid: {errors[:3]}")
        if not self.initialized and method != "notifications/message":
            raise violation("initialization", f"the server sent {method} before initialization")
        needed = NEEDS_SERVER.get(method)
        if needed is not None and not _capability(self.server_capabilities, needed):
            raise violation("capabilities", f"{method} without declaring {'.'.join(needed)}")
        if method == "notifications/resources/updated" and params.get("uri") not in self.subscribed:
            raise violation(
                "capabilities", f"an update for {params.get('uri')!r}, never subscribed to"
            )
        if method == "notifications/progress":
            self._progress(params, now)
        elif (
            method == "notifications/cancelled"
            and params.get("requestId") not in self._reverse_seen
        ):
            raise violation(
                "ids", f"the server cancelled {params.get('requestId')!r}, which it never sent"
            )

    def _progress(self, params: Mapping[str, Any], now: float | None) -> None:
        token = params.get("progressToken")
        index = self._tokens.get(token) if isinstance(token, str | int) else None
        if index is None:
            raise violation("progress", f"progress for token {token!r}, which no request carries")
        pending = self.pending[index]
        cancelled = pending.cancelled_epoch
        if cancelled is not None and self.epoch >= cancelled + CANCEL_GRACE:
            raise violation(
                "cancellation",
                f"progress after the cancellation of {pending.frame.describe()}",
            )
        if pending.answers:
            raise violation(
                "progress", f"progress after the response, for {pending.frame.describe()}"
            )
        value = params.get("progress")
        if not isinstance(value, int | float):
            raise violation("schema", f"progress {value!r} is not a number")
        if pending.last_progress is not None and value <= pending.last_progress:
            raise violation(
                "progress",
                f"progress went from {pending.last_progress} to {value} for token {token!r}",
            )
        pending.last_progress = value
        pending.progress_seen += 1
        if now is not None:
            pending.alive_at = now

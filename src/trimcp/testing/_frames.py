"""Frames (the raw bytes one message takes on the wire) and what the server owes for each.

A :class:`Frame` is what the conformance machine sends: exact bytes, so it can send
what no well-behaved client would (duplicate keys, bad UTF-8, a truncated object). Its
:class:`Expect` says what a conforming server must answer, and :func:`expect_for` derives
that from the JSON-RPC 2.0 and MCP rules, so every frame in a replay file is
self-describing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from ._schemas import method_table, schema_errors

__all__ = ["Count", "Expect", "Frame", "dumps", "expect_for", "valid_id"]

Count = Literal["one", "at-most-one", "none"]
Id = str | int

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


def valid_id(value: object) -> bool:
    """MCP request ids are strings or integers (never null, never a float or a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def dumps(value: Any) -> bytes:
    """Compact JSON, UTF-8, no raw newlines (one NDJSON line)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@attrs.frozen
class Expect:
    """What a conforming server owes for one frame.

    ``count``: ``one`` response, ``at-most-one`` (cancelled) or ``none`` (a notification
    or a response). ``ids``: the ids that response may carry (``None`` for the null id of
    a message whose id could not be read). ``codes``: when the answer is an error, the
    codes allowed (``None``: any). ``must_error``: a success would be a violation.
    ``method``: the request method, whose result definition a success must match.
    """

    count: Count
    ids: tuple[Id | None, ...] = ()
    codes: tuple[int, ...] | None = None
    must_error: bool = False
    method: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "ids": list(self.ids),
            "codes": None if self.codes is None else list(self.codes),
            "must_error": self.must_error,
            "method": self.method,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Expect:
        codes = value.get("codes")
        return cls(
            count=value["count"],
            ids=tuple(value.get("ids", ())),
            codes=None if codes is None else tuple(codes),
            must_error=bool(value.get("must_error", False)),
            method=value.get("method"),
        )


@attrs.frozen(repr=False)
class Frame:
    """Exact bytes to send (without the NDJSON newline), a label, and the expectation."""

    data: bytes
    kind: str
    expect: Expect
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": self.kind, "note": self.note}
        try:
            body["text"] = self.data.decode("utf-8")
        except UnicodeDecodeError:
            body["base64"] = base64.b64encode(self.data).decode("ascii")
        body["expect"] = self.expect.to_json()
        return body

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Frame:
        if "text" in value:
            data = str(value["text"]).encode("utf-8")
        else:
            data = base64.b64decode(value["base64"])
        return cls(data, value["kind"], Expect.from_json(value["expect"]), value.get("note", ""))

    def __repr__(self) -> str:  # short: frames can be megabytes
        return f"Frame({self.describe()!r}, {self.expect!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # Hypothesis' printer
        printer.text(repr(self))

    def describe(self) -> str:
        text = self.data.decode("utf-8", "backslashreplace")
        shown = text if len(text) <= 200 else f"{text[:160]}... ({len(self.data)} bytes)"
        return f"[{self.kind}] {shown}"


def _error(codes: Sequence[int], ids: Sequence[Id | None]) -> Expect:
    return Expect("one", tuple(ids), tuple(codes), must_error=True)


def expect_for(revision: str, message: object) -> Expect:
    """What a server must answer for ``message`` (an already-parsed JSON value)."""
    if not isinstance(message, dict):
        return _error([INVALID_REQUEST], [None])
    has_id = "id" in message
    raw_id = message.get("id")
    echo: list[Id | None] = [raw_id] if valid_id(raw_id) else []
    if message.get("jsonrpc") != "2.0":
        return _error([INVALID_REQUEST], [*echo, None])
    if "method" not in message and has_id and ("result" in message or "error" in message):
        return Expect("none")  # a response: nothing is owed (an unknown id is ignored)
    method = message.get("method")
    if not isinstance(method, str):
        return _error([INVALID_REQUEST], [*echo, None])
    if not has_id:
        return Expect("none")  # a notification is never answered
    if not echo:
        return _error([INVALID_REQUEST], [None])
    if "params" in message and not isinstance(message["params"], dict):
        return _error([INVALID_REQUEST, INVALID_PARAMS], [*echo, None])
    table = method_table(revision)
    definition = table.client_requests.get(method)
    if definition is None:
        return _error([METHOD_NOT_FOUND], echo)
    if schema_errors(revision, definition, message):
        # -32601 too: a server need not implement every method (logging/setLevel, ...).
        return Expect("one", tuple(echo), (INVALID_PARAMS, METHOD_NOT_FOUND))
    return Expect("one", tuple(echo), method=method)

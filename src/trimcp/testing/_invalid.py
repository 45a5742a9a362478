"""Near-miss frames: valid MCP messages with one thing wrong, as the bytes a server sees.

Each strategy starts from a valid client request (see :mod:`._messages`) and changes one
thing: a member of the wrong JSON type, a member missing, a key with its case changed, a
key given twice in the raw JSON, an id MCP forbids, a value too large or nested too
deep, bytes that are not JSON (or not UTF-8) at all, a stray response. What the server
owes for the result is worked out by :func:`expect_for` from the rules, not assumed by
the mutation, so a mutation that happens to leave the message valid is simply a valid
message.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import attrs
from hypothesis import strategies as st

from ._frames import INVALID_REQUEST, PARSE_ERROR, Expect, Frame, dumps, expect_for, valid_id
from ._messages import Id, client_requests

__all__ = ["invalid_frames"]

#: Methods a mutation never starts from (a second initialize is a session question).
_NOT_MUTATED = ("initialize",)
_OTHER_TYPES: list[Any] = [None, True, 1.5, 7, "x", [], [1], {}, {"a": 1}]
_BAD_IDS: list[Any] = [None, True, False, 1.5, -0.5, {}, {"id": 1}, [], [1]]


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Every member path of a JSON object, parents before children (depth-limited)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict) and depth < 4:
        for key, child in value.items():
            found.append((*prefix, key))
            found.extend(_paths(child, (*prefix, key), depth + 1))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any, *, delete: bool = False) -> Any:
    if not path:
        return new
    copy = dict(value)
    head, rest = path[0], path[1:]
    if rest:
        copy[head] = _replace(copy[head], rest, new, delete=delete)
    elif delete:
        del copy[head]
    else:
        copy[head] = new
    return copy


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _json_type(value: Any) -> str:
    return type(value).__name__ if not isinstance(value, bool) else "bool"


def _frame(revision: str, message: Any, kind: str, note: str) -> Frame:
    return Frame(dumps(message), kind, expect_for(revision, message), note)


def _wrong_type(revision: str, message: dict[str, Any], data: st.DataObject) -> Frame:
    path = data.draw(st.sampled_from(_paths(message)), label="path")
    old = _get(message, path)
    choices = [v for v in _OTHER_TYPES if _json_type(v) != _json_type(old)]
    if path == ("id",):
        choices = _BAD_IDS
    elif path[-1] == "progressToken":
        # Only types no token has: a string or integer here would be a valid token the
        # caller never registered (and the same one in every such frame).
        choices = [v for v in choices if not valid_id(v)]  # (a token's type is an id's)
    new = data.draw(st.sampled_from(choices), label="new value")
    note = f"{'.'.join(map(str, path))}: {json.dumps(old)[:40]} -> {json.dumps(new)}"
    return _frame(revision, _replace(message, path, new), "wrong-type", note)


def _missing(revision: str, message: dict[str, Any], data: st.DataObject) -> Frame:
    path = data.draw(st.sampled_from(_paths(message)), label="path")
    mutated = _replace(message, path, None, delete=True)
    return _frame(revision, mutated, "missing-member", "removed " + ".".join(map(str, path)))


def _case_changed(revision: str, message: dict[str, Any], data: st.DataObject) -> Frame:
    paths = [
        p for p in _paths(message) if isinstance(p[-1], str) and p[-1].lower() != p[-1].upper()
    ]
    path = data.draw(st.sampled_from(paths), label="path")
    key: str = path[-1]
    new_key = data.draw(
        st.sampled_from([key.upper(), key.capitalize(), key.swapcase()]).filter(lambda k: k != key),
        label="new key",
    )
    parent = _get(message, path[:-1])
    renamed = {(new_key if k == key else k): v for k, v in parent.items()}
    mutated = _replace(message, path[:-1], renamed) if path[:-1] else renamed
    return _frame(revision, mutated, "case-changed", f"{key} -> {new_key}")


def _duplicate_key(revision: str, message: dict[str, Any], data: st.DataObject, other: Id) -> Frame:
    key = data.draw(st.sampled_from(["id", "method", "jsonrpc"]), label="key")
    second = {"id": other, "method": "ping", "jsonrpc": "2.0"}[key]
    text = dumps(message).decode("utf-8")
    mutated = text[:-1] + "," + json.dumps(key) + ":" + json.dumps(second) + "}"
    last = {**message, key: second}
    ids = tuple(dict.fromkeys(i for i in (message["id"], last.get("id"), None)))
    expect = Expect("one", ids)  # lenient (first or last wins) or strict (refused): one answer
    return Frame(mutated.encode("utf-8"), "duplicate-key", expect, f"{key} given twice")


def _deep(depth: int, request_id: Id) -> Frame:
    nested = "[" * depth + "]" * depth
    text = (
        '{"jsonrpc":"2.0","id":'
        + json.dumps(request_id)
        + ',"method":"ping","params":{"_meta":{"deep":'
        + nested
        + "}}}"
    )
    expect = Expect("one", (request_id, None))
    return Frame(text.encode("utf-8"), "deeply-nested", expect, f"depth {depth}")


def _oversized(size: int, request_id: Id) -> Frame:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "ping",
        "params": {"_meta": {"blob": "x" * size}},
    }
    return Frame(dumps(message), "oversized", Expect("one", (request_id, None)), f"{size} bytes")


_GARBAGE: list[tuple[bytes, str, tuple[int, ...]]] = [
    (b"{", "truncated object", (PARSE_ERROR,)),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', "unterminated", (PARSE_ERROR,)),
    (b"not json at all", "text", (PARSE_ERROR,)),
    (b'{"jsonrpc":"2.0",}', "trailing comma", (PARSE_ERROR,)),
    (b"\xff\xfe{}", "not UTF-8", (PARSE_ERROR, INVALID_REQUEST)),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}}', "trailing garbage", (PARSE_ERROR,)),
    (b"null", "null", (INVALID_REQUEST,)),
    (b"42", "a number", (INVALID_REQUEST,)),
    (b'"ping"', "a string", (INVALID_REQUEST,)),
    (b"[]", "empty array", (INVALID_REQUEST,)),
    (b"{}", "empty object", (INVALID_REQUEST,)),
]


def _garbage() -> st.SearchStrategy[Frame]:
    return st.sampled_from(_GARBAGE).map(
        lambda g: Frame(g[0], "not-json-rpc", Expect("one", (None,), g[2], must_error=True), g[1])
    )


#: Stand-ins the cached strategies use; replaced by the caller's ids and progress token
#: in the bytes.
_FIRST, _SECOND = 2**60 + 7, 2**60 + 9
_TOKEN = "trimcp-near-miss-progress-token"


def _substitute(frame: Frame, first: Id, second: Id, token: Id) -> Frame:
    swap = {_FIRST: first, _SECOND: second}
    data = frame.data.replace(str(_FIRST).encode(), dumps(first))
    data = data.replace(str(_SECOND).encode(), dumps(second))
    data = data.replace(dumps(_TOKEN), dumps(token))
    ids = tuple(swap.get(i, i) if isinstance(i, int) else i for i in frame.expect.ids)
    note = frame.note.replace(_TOKEN, str(token))
    return Frame(data, frame.kind, attrs.evolve(frame.expect, ids=ids), note)


def _with_stand_in_token(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its progress token, if it has one, replaced by :data:`_TOKEN`."""
    params = message.get("params")
    if not isinstance(params, dict):
        return message
    meta = params.get("_meta")
    if isinstance(meta, dict) and "progressToken" in meta:
        meta = {**meta, "progressToken": _TOKEN}
        return {**message, "params": {**params, "_meta": meta}}
    return message


def invalid_frames(
    revision: str, ids: Sequence[Id], *, max_size: int = 1 << 20, token: Id | None = None
) -> st.SearchStrategy[Frame]:
    """Near-miss frames for ``revision``; requests use ``ids[0]`` (and ``ids[1]``).

    ``ids`` must hold two ids unused in the session; ``max_size`` caps the oversized
    frames (bytes). A request with a progress token carries ``token`` (default:
    ``"near-miss-<ids[0]>"``, unique as ``ids[0]`` is): a near miss may still
    be a request a server runs (a key given twice, a member it may ignore), and its
    progress notifications then name that token, which the sender must know as its own.
    A mutation never turns the token into another string or integer.
    """
    first, second = ids[0], ids[1]
    chosen = f"near-miss-{first}" if token is None else token
    return _cached_frames(revision, max_size).map(lambda f: _substitute(f, first, second, chosen))


@functools.cache
def _cached_frames(revision: str, max_size: int) -> st.SearchStrategy[Frame]:
    first, second = _FIRST, _SECOND
    base = client_requests(revision, request_id=first, exclude=_NOT_MUTATED)
    sizes = [s for s in (4096, 65536, 1 << 20, 4 << 20) if s <= max_size] or [max_size]
    depths = [d for d in (32, 600, 5000, 100_000) if 2 * d + 100 <= max_size] or [8]

    @st.composite
    def mutated(draw: st.DrawFn) -> Frame:
        message = _with_stand_in_token(draw(base))
        data = draw(st.data())
        kind = draw(st.sampled_from(["type", "missing", "case", "dup"]))
        if kind == "type":
            return _wrong_type(revision, message, data)
        if kind == "missing":
            return _missing(revision, message, data)
        if kind == "case":
            return _case_changed(revision, message, data)
        return _duplicate_key(revision, message, data, second)

    stray = st.just(
        Frame(
            dumps({"jsonrpc": "2.0", "id": first, "result": {}}),
            "stray-response",
            Expect("none"),
            "a response to a request the server never sent",
        )
    )
    unknown = st.just(
        _frame(
            revision,
            {"jsonrpc": "2.0", "id": first, "method": "no/such/method"},
            "unknown-method",
            "",
        )
    )
    return st.one_of(
        mutated(),
        _garbage(),
        stray,
        unknown,
        st.sampled_from(depths).map(lambda d: _deep(d, first)),
        st.sampled_from(sizes).map(lambda s: _oversized(s, first)),
    )

"""Duplicate member names are found in any JSON text, whatever its strings hold.

:func:`trimcp.wire._json.parse_json` finds duplicates by counting (members kept against
colons outside strings) rather than by a hook per object. The property compares it with
the reference, the stdlib parser with an ``object_pairs_hook`` that sees every member,
over texts built to defeat counting: keys repeated within and across objects, colons,
quotes and backslashes inside strings, colons written as ``\\u003a``, whitespace around
separators.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.wire._json import DuplicateMembers, parse_json

TRICKY = st.text(alphabet=st.sampled_from(["a", "b", ":", '"', "\\", " ", "/", "é"]), max_size=4)
SPACE = st.sampled_from(["", " ", "\n\t "])


@st.composite
def _string(draw: st.DrawFn) -> tuple[str, str]:
    """A string and a JSON literal for it (colons maybe escaped, non-ASCII maybe too)."""
    value = draw(TRICKY)
    literal = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        literal = literal.replace(":", "\\u003a")
    return value, literal


@st.composite
def _text(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(
        st.sampled_from(["object", "object", "array", "scalar"] if depth < 3 else ["scalar"])
    )
    if kind == "scalar":
        if draw(st.booleans()):
            return draw(_string())[1]
        return json.dumps(draw(st.none() | st.booleans() | st.integers(-5, 5)))
    if kind == "array":
        items = draw(st.lists(_text(depth + 1), max_size=3))
        return "[" + ",".join(items) + "]"
    keys = draw(st.lists(_string(), max_size=4))
    if keys and draw(st.booleans()):
        keys.append(draw(st.sampled_from(keys)))  # a repeated name, maybe written otherwise
    space = draw(SPACE)
    members = [f"{k[1]}{space}:{space}{draw(_text(depth + 1))}" for k in keys]
    return "{" + ("," + space).join(members) + "}"


class _Repeated(Exception):
    pass


def _reference_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Repeated
    return obj


def _reference(text: str) -> tuple[str, Any]:
    try:
        return "value", json.loads(text, object_pairs_hook=_reference_pairs)
    except _Repeated:
        return "duplicate", None


def _ours(text: str) -> tuple[str, Any]:
    try:
        return "value", parse_json(text, 64)
    except DuplicateMembers:
        return "duplicate", None


@given(_text())
def test_duplicates_are_found_exactly_as_a_hook_per_object_finds_them(text: str) -> None:
    assert _ours(text) == _reference(text)
    assert _ours(text.encode()) == _reference(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a:b":1,"a":2,"a":3}',  # a colon in a key makes up for the lost member
        '{"u":"x:y","k":1,"k":2}',  # ... or one in a value
        '{"a\\u003a":1,"a\\u003a":2}',  # the same name, its colon escaped
        '{"q\\"":1,"q\\"":2}',  # an escaped quote in the name
        '{"s\\\\":"\\\\:","s\\\\":0}',  # escaped backslashes before quotes
        '[{"k":1},{"k":1,"k":1}]',
    ],
)
def test_a_duplicate_hidden_by_colons_in_strings_is_found(text: str) -> None:
    assert _reference(text)[0] == "duplicate"
    with pytest.raises(DuplicateMembers):
        parse_json(text, 64)


def test_colons_in_strings_alone_are_no_duplicate() -> None:
    text = '{"uri":"https://h:1/a:b","k\\u003a":"\\":","n":{"x:":[":"]}}'
    assert parse_json(text, 64) == json.loads(text)


def test_threads_parsing_at_once_keep_their_own_counts() -> None:
    # The member count lives per thread: a scan runs Python code (its object hook),
    # where another thread's scan may run too.
    texts = ['{"a":1,"b":{"c":2}}', '{"k":1,"k":2}', '[{"x":"y:z"},{"x":1,"x":1}]'] * 300
    expected = [_reference(t)[0] for t in texts]
    outcomes: list[list[str]] = []

    def work() -> None:
        outcomes.append([_ours(t)[0] for t in texts])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == [expected] * 4

"""The public strategies of ``trimcp.testing``: valid means schema-valid, near misses are not.

Every definition of every shipped revision compiles, and what it draws validates; whole
messages validate as ``JSONRPCMessage``; near misses carry the answer the JSON-RPC and
MCP rules require; sessions start with ``open`` and replay as data.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.testing import (
    HANDSHAKE_REVISIONS,
    REVISIONS,
    Frame,
    HttpTarget,
    client_notifications,
    client_requests,
    for_tool_schema,
    from_definition,
    invalid_frames,
    is_loopback_url,
    method_table,
    schema_errors,
    server_messages,
    sessions,
)
from trimcp.testing._frames import expect_for
from trimcp.testing._invalid import _case_changed, _duplicate_key, _missing, _wrong_type
from trimcp.testing._schemas import definitions

FAST = settings(
    max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
ALL_DEFINITIONS = [(r, name) for r in (*REVISIONS, "ext-tasks") for name in definitions(r)]


@pytest.mark.parametrize("revision", [*REVISIONS, "ext-tasks"])
def test_every_definition_draws_valid_values(revision: str) -> None:
    names = sorted(definitions(revision))

    @settings(max_examples=len(names), deadline=None, database=None)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(names), label="definition")
        value = data.draw(from_definition(revision, name), label="value")
        assert schema_errors(revision, name, value) == [], (name, value)

    check()


def test_definitions_compile_once() -> None:
    assert from_definition("2025-11-25", "CallToolRequest") is from_definition(
        "2025-11-25", "CallToolRequest"
    )


@pytest.mark.parametrize("revision", REVISIONS)
def test_whole_messages_validate(revision: str) -> None:
    table = method_table(revision)
    assert table.client_requests  # derived from the schema, not listed by hand

    @FAST
    @given(
        client_requests(revision, request_id=7)
        | client_notifications(revision)
        | server_messages(revision)
    )
    def check(message: dict[str, object]) -> None:
        assert schema_errors(revision, "JSONRPCMessage", message) == []

    check()


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_valid_requests_are_owed_one_response_of_any_kind(revision: str) -> None:
    @FAST
    @given(client_requests(revision, request_id="r-1"))
    def check(message: dict[str, object]) -> None:
        expect = expect_for(revision, message)
        assert expect.count == "one"
        assert expect.ids == ("r-1",)
        assert expect.codes is None
        assert not expect.must_error

    check()


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_near_misses_are_what_they_claim(revision: str) -> None:
    @FAST
    @given(invalid_frames(revision, [41, "n-42"], max_size=1 << 16))
    def check(frame: Frame) -> None:
        assert len(frame.data) <= (1 << 16) + 200
        assert b"\n" not in frame.data  # one NDJSON line
        try:
            value = json.loads(frame.data)
        except (ValueError, RecursionError):
            assert frame.expect.must_error or frame.kind in ("duplicate-key", "deeply-nested")
            return
        if frame.kind in ("duplicate-key", "deeply-nested", "oversized"):
            return
        # The stated expectation is the one the rules give for what was sent.
        assert frame.expect == expect_for(revision, value)
        if frame.expect.count == "one" and frame.expect.codes is None:
            assert frame.kind in ("wrong-type", "missing-member", "case-changed")

    check()


def _progress_tokens(data: bytes) -> list[object]:
    """Every progress token a request in ``data`` asks for (``_meta.progressToken`` of a
    token's type), however a key given twice is read; none for bytes that are not JSON."""
    found: list[object] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        for key, value in items:
            if key == "_meta" and isinstance(value, dict):
                token = value.get("progressToken")
                if type(token) in (str, int):
                    found.append(token)
        return dict(items)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    return found


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_a_near_miss_carries_no_progress_token_but_the_one_given(revision: str) -> None:
    # A near miss may still be run (a key given twice, a member a server may ignore),
    # and its progress then names the token: the sender must know it as its own.
    @settings(FAST, max_examples=100)
    @given(invalid_frames(revision, [41, "n-42"], max_size=1 << 16, token="tok-7"))
    def check(frame: Frame) -> None:
        assert set(_progress_tokens(frame.data)) <= {"tok-7"}

    check()


_WITH_TOKEN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "t", "arguments": {}, "_meta": {"progressToken": "tok"}},
}


@settings(FAST, max_examples=200)
@given(st.data(), st.sampled_from(["type", "missing", "case", "dup"]))
def test_a_mutation_keeps_a_progress_token_or_leaves_none(data: st.DataObject, kind: str) -> None:
    revision = "2025-06-18"
    if kind == "type":
        frame = _wrong_type(revision, _WITH_TOKEN, data)
    elif kind == "missing":
        frame = _missing(revision, _WITH_TOKEN, data)
    elif kind == "case":
        frame = _case_changed(revision, _WITH_TOKEN, data)
    else:
        frame = _duplicate_key(revision, _WITH_TOKEN, data, 2)
    assert set(_progress_tokens(frame.data)) <= {"tok"}


def test_near_miss_examples() -> None:
    assert expect_for("2025-06-18", {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}).ids == (None,)
    assert expect_for("2025-06-18", {"jsonrpc": "2.0", "method": "ping"}).count == "none"
    unknown = expect_for("2025-06-18", {"jsonrpc": "2.0", "id": 3, "method": "x/y"})
    assert unknown.codes == (-32601,)
    bad_params = expect_for("2025-06-18", {"jsonrpc": "2.0", "id": 3, "method": "tools/call"})
    assert bad_params.codes is not None
    assert -32602 in bad_params.codes
    wrong_version = expect_for("2025-06-18", {"jsonrpc": "1.0", "id": 3, "method": "ping"})
    assert wrong_version.must_error
    assert wrong_version.ids == (3, None)


@FAST
@given(sessions(max_steps=6))
def test_sessions_start_with_open_and_are_json(steps: list[dict[str, object]]) -> None:
    assert steps[0]["op"] == "open"
    assert json.loads(json.dumps(steps)) == steps
    for step in steps:
        if step["op"] == "send":
            frame = Frame.from_json(step["frame"])  # type: ignore[arg-type]
            # Any progress token a step sends is the one it registers.
            assert set(_progress_tokens(frame.data)) <= {step["token"]}


def test_tool_arguments_follow_the_input_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/t"}},
        },
        "required": ["a"],
        "$defs": {"t": {"type": "string", "enum": ["x", "y"]}},
    }

    @FAST
    @given(for_tool_schema(schema))
    def check(arguments: dict[str, object]) -> None:
        assert isinstance(arguments["a"], int)
        assert set(arguments.get("tags", [])) <= {"x", "y"}  # type: ignore[arg-type]

    check()


def test_only_loopback_urls_unless_allowed() -> None:
    assert is_loopback_url("http://127.0.0.1:9/mcp")
    assert is_loopback_url("http://[::1]:9/mcp")
    assert is_loopback_url("http://localhost:9/mcp")
    assert not is_loopback_url("http://example.com/mcp")
    with pytest.raises(ValueError, match="loopback"):
        HttpTarget("http://192.0.2.1:8000/mcp")
    assert HttpTarget("http://192.0.2.1:8000/mcp", allow_remote=True).port == 8000

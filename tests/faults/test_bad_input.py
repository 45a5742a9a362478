"""Bad input over a byte stream (faults-and-limits rows B1-B13).

For every row: the exact error the session (or its transport) answers with, the id it
echoes (or null), and then proof that the session survived: a ``ping`` (or a tool call)
on the same stream is still answered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trimcp.server import Server
from trimcp.wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RemoteProtocolError,
    decode,
)

from ._bytes import byte_session, error_of


def _server() -> Server:
    server = Server("faults", "1.0")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    return server


def _line(text: str | bytes) -> bytes:
    return (text.encode() if isinstance(text, str) else text) + b"\n"


async def _expect_error(raw: bytes, want_id: Any, want_code: int) -> None:
    async with byte_session(_server()) as peer:
        await peer.write(raw)
        assert error_of(await peer.read()) == (want_id, want_code)
        assert await peer.quiet() == []
        await peer.assert_alive()


# ---------------------------------------------------------------- B1, B2, B3


@pytest.mark.parametrize(
    "text",
    ['{"jsonrpc":"2.0",', '{"jsonrpc":"2.0","id":1,"method":"ping"', "{", "}", "nul", '{"a" 1}'],
)
async def test_b1_truncated_or_malformed_json_is_a_parse_error(text: str) -> None:
    await _expect_error(_line(text), None, PARSE_ERROR)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}',
        b'{"jsonrpc":"2.0","id":"\xc3\x28","method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":"pi\xedng"}',
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
    ],
)
async def test_b2_invalid_utf8_is_a_parse_error_never_replaced(raw: bytes) -> None:
    await _expect_error(_line(raw), None, PARSE_ERROR)


@pytest.mark.parametrize("text", ["42", '"x"', "null", "true", "false", "1.5", "-0"])
async def test_b3_a_json_scalar_is_an_invalid_request_with_null_id(text: str) -> None:
    await _expect_error(_line(text), None, INVALID_REQUEST)


# ---------------------------------------------------------------- B4

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
PING2 = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


@pytest.mark.parametrize("batch", [[], [PING], [PING, PING2]])
async def test_b4_batches_are_refused_after_2025_06_18(batch: list[Any]) -> None:
    async with byte_session(_server(), version="2025-11-25") as peer:
        await peer.write(_line(json.dumps(batch)))
        assert error_of(await peer.read()) == (None, INVALID_REQUEST)
        assert await peer.quiet() == []
        await peer.assert_alive()


async def test_b4_batches_are_accepted_once_2025_03_26_was_negotiated() -> None:
    async with byte_session(_server(), version="2025-03-26") as peer:
        await peer.write(_line(json.dumps([PING, PING2])))
        answers = [await peer.read(), await peer.read()]
        assert sorted(answers, key=lambda a: a["id"]) == [
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "result": {}},
        ]
        # An empty batch is still invalid in that revision.
        await peer.write(_line("[]"))
        assert error_of(await peer.read()) == (None, INVALID_REQUEST)
        await peer.assert_alive()


# ---------------------------------------------------------------- B5, B6


@pytest.mark.parametrize(
    ("message", "want_id"),
    [
        ({"id": 5, "method": "ping"}, 5),  # no jsonrpc
        ({"jsonrpc": "1.0", "id": 5, "method": "ping"}, 5),
        ({"jsonrpc": 2.0, "id": 5, "method": "ping"}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": 7}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": ""}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": 3}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": [1, 2]}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": None}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "result": {}}, 5),
        ({"jsonrpc": "2.0", "id": 5}, 5),  # neither method nor result nor error
        ({"jsonrpc": "2.0", "method": 7}, None),  # notification-shaped: null id
    ],
)
async def test_b5_wrong_member_types_are_invalid_requests(
    message: dict[str, Any], want_id: Any
) -> None:
    await _expect_error(_line(json.dumps(message)), want_id, INVALID_REQUEST)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 5, "result": {}, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "id": 5, "result": 3},
        {"jsonrpc": "2.0", "id": 5, "error": "bad"},
        {"jsonrpc": "2.0", "id": 5, "error": {"code": "x", "message": "m"}},
        {"jsonrpc": "1.0", "id": 5, "result": {}},
    ],
)
async def test_b5_malformed_responses_are_dropped_without_reply(message: dict[str, Any]) -> None:
    async with byte_session(_server()) as peer:
        await peer.send(message)
        assert await peer.quiet() == []
        await peer.assert_alive()


@pytest.mark.parametrize("bad_id", ["null", "true", "false", "1.5", "{}", "[1]", "1e3"])
async def test_b6_ids_other_than_string_or_integer_are_refused(bad_id: str) -> None:
    raw = _line(f'{{"jsonrpc":"2.0","id":{bad_id},"method":"ping"}}')
    await _expect_error(raw, None, INVALID_REQUEST)


# ---------------------------------------------------------------- B7, B8

CASE_VARIANTS = ["Method", "METHOD", "mEthod", "method ", "\u217fethod", "m\u0435thod"]


@pytest.mark.parametrize("key", CASE_VARIANTS)
async def test_b7_method_key_variants_are_unknown_members(key: str) -> None:
    # The message has no "method" member, so it is an invalid request (id echoed).
    await _expect_error(_line(json.dumps({"jsonrpc": "2.0", "id": 9, key: "ping"})), 9, -32600)


@pytest.mark.parametrize("key", ["Jsonrpc", "JSONRPC", "j\u017fonrpc", "j\u0455onrpc"])
async def test_b7_jsonrpc_key_variants_leave_the_message_without_jsonrpc(key: str) -> None:
    await _expect_error(_line(json.dumps({key: "2.0", "id": 9, "method": "ping"})), 9, -32600)


@pytest.mark.parametrize("key", ["Params", "PARAMS", "param\u017f", "p\u0430rams"])
async def test_b7_params_key_variants_are_never_taken_as_params(key: str) -> None:
    async with byte_session(_server()) as peer:
        message = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            key: {"name": "add", "arguments": {"a": 1, "b": 2}},
        }
        await peer.send(message)
        # No params: tools/call without a name is invalid params; the tool never ran.
        assert error_of(await peer.read()) == (9, INVALID_PARAMS)
        await peer.assert_alive()


@pytest.mark.parametrize("key", ["ID", "Id", "\u0131d", "\uff49d"])
async def test_b7_id_key_variants_make_a_notification_that_gets_no_reply(key: str) -> None:
    async with byte_session(_server()) as peer:
        await peer.send({"jsonrpc": "2.0", key: 9, "method": "ping"})
        assert await peer.quiet() == []
        await peer.assert_alive()


#: Characters that fold (case, compatibility or look-alike) to each ASCII letter used.
_FOLDS = {
    "s": "S\u017f\u0455",
    "k": "K\u212a",
    "i": "I\u0131\u0456\uff49",
    "d": "D\u217e",
    "m": "M\u217f",
    "e": "E\u0435",
    "o": "O\u043e",
    "p": "P\u0440",
    "a": "A\u0430",
    "r": "R",
    "t": "T",
    "h": "H",
    "j": "J\u0458",
    "n": "N",
    "c": "C\u0441",
}
_BASE = {"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {}}


@st.composite
def _key_variant(draw: st.DrawFn) -> tuple[str, str]:
    key = draw(st.sampled_from(sorted(_BASE)))
    chars = [draw(st.sampled_from(c + _FOLDS.get(c, c.upper()))) for c in key]
    variant = "".join(chars)
    assume(variant != key)
    return key, variant


@settings(max_examples=60, deadline=None)
@given(_key_variant())
def test_b7_every_fold_of_a_top_level_key_is_an_unknown_member(pair: tuple[str, str]) -> None:
    key, variant = pair
    with_variant = {k if k != key else variant: v for k, v in _BASE.items()}
    without = {k: v for k, v in _BASE.items() if k != key}

    def outcome(message: dict[str, Any]) -> Any:
        try:
            return ("message", decode(json.dumps(message).encode()))
        except RemoteProtocolError as exc:
            return ("error", exc.error_hint)

    assert outcome(with_variant) == outcome(without)


@pytest.mark.parametrize(
    ("text", "want_id"),
    [
        ('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', None),
        ('{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}', 7),
        ('{"jsonrpc":"2.0","jsonrpc":"2.0","id":7,"method":"ping"}', 7),
        ('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":1,"a":2}}', 7),
    ],
)
async def test_b8_duplicate_keys_are_invalid_requests(text: str, want_id: Any) -> None:
    await _expect_error(_line(text), want_id, INVALID_REQUEST)


# ---------------------------------------------------------------- B9


async def test_b9_deep_nesting_is_a_parse_error() -> None:
    deep = (
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":'
        + "[" * 100_000
        + "]" * 100_000
        + "}}"
    )
    await _expect_error(_line(deep), None, PARSE_ERROR)
    await _expect_error(_line("[" * 100_000), None, PARSE_ERROR)


async def test_b9_a_million_digit_integer_is_a_parse_error() -> None:
    huge = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":' + "9" * 10**6 + "}}"
    await _expect_error(_line(huge), None, PARSE_ERROR)
    await _expect_error(
        _line('{"jsonrpc":"2.0","id":' + "1" * 10**6 + ',"method":"ping"}'), None, PARSE_ERROR
    )


# ---------------------------------------------------------------- B10, B11


async def test_b10_unknown_method_and_unknown_notification() -> None:
    async with byte_session(_server()) as peer:
        assert error_of(await peer.request(3, "no/such/method")) == (3, METHOD_NOT_FOUND)
        await peer.notify("notifications/no-such-thing", {"x": 1})
        assert await peer.quiet() == []
        await peer.assert_alive()


async def test_b11_invalid_params_twice_then_a_good_call_succeeds() -> None:
    """Shaped like python-sdk's ``tests/issues/test_malformed_input.py`` (CVE-2025-53366)."""
    async with byte_session(_server(), initialize=False) as peer:
        first = await peer.request("bad-1", "initialize")  # no params at all
        assert error_of(first) == ("bad-1", INVALID_PARAMS)
        second = await peer.request("bad-2", "initialize", {"protocolVersion": 5})
        assert error_of(second) == ("bad-2", INVALID_PARAMS)
        assert "Traceback" not in json.dumps([first, second])
        await peer.initialize()
        bad_level = await peer.request("bad-3", "logging/setLevel", {"level": "loud"})
        assert error_of(bad_level) == ("bad-3", INVALID_PARAMS)
        good = await peer.call_tool("good", "add", {"a": 2, "b": 3})
        assert good["id"] == "good"
        assert good["result"]["structuredContent"] == {"result": 5}
        # Schema-valid but semantically bad tool input is a result with isError.
        wrong = await peer.call_tool("wrong", "add", {"a": "two", "b": 3})
        assert wrong["result"]["isError"] is True


# ---------------------------------------------------------------- B12, B13


async def test_b12_requests_before_initialize_are_refused_except_ping() -> None:
    async with byte_session(_server(), initialize=False) as peer:
        calls = [
            ("tools/list", {}),
            ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
            ("logging/setLevel", {"level": "info"}),
        ]
        for index, (method, params) in enumerate(calls):
            reply = await peer.request(index, method, params)
            assert error_of(reply) == (index, INVALID_REQUEST), reply
            assert "not initialized" in reply["error"]["message"]
        await peer.assert_alive()  # ping is allowed before initialize
        await peer.initialize()
        listed = await peer.request("list", "tools/list")
        assert [t["name"] for t in listed["result"]["tools"]] == ["add"]


async def test_b13_a_second_initialize_is_refused_and_changes_nothing() -> None:
    async with byte_session(_server()) as peer:
        state = peer.session.state
        before = (state.client_info, state.client_capabilities, state.protocol_version)
        again = await peer.request(
            "init-2",
            "initialize",
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "intruder", "version": "6.6.6"},
            },
        )
        assert error_of(again) == ("init-2", INVALID_REQUEST)
        assert (state.client_info, state.client_capabilities, state.protocol_version) == before
        assert state.client_info is not None
        assert state.client_info.name == "byte-peer"
        await peer.assert_alive()

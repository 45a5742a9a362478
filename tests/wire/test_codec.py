"""The codec: every decoding rule, the B1-B9 rows of faults-and-limits.md, and encoding."""

from __future__ import annotations

import json
import pickle
import sys
from typing import Any

import attrs
import pytest

from trimcp.wire import (
    INVALID_REQUEST,
    NO_DATA,
    PARSE_ERROR,
    ErrorObject,
    ErrorResponse,
    LocalProtocolError,
    Message,
    Notification,
    ProtocolError,
    RemoteProtocolError,
    Request,
    Response,
    decode,
    decode_value,
    encode,
    to_value,
)
from trimcp.wire._events import trusted_notification, trusted_request, trusted_response

TOOLS_CALL = (
    b'{"jsonrpc":"2.0","id":42,"method":"tools/call",'
    b'"params":{"name":"search","arguments":{"query":"trio","limit":10}}}'
)


def _reject(data: bytes | str, **kwargs: Any) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as info:
        decode(data, **kwargs)
    exc = info.value
    assert not exc.fatal
    return exc


def _hint(exc: RemoteProtocolError) -> ErrorResponse:
    assert exc.error_hint is not None
    return exc.error_hint


def assert_parse_error(data: bytes | str, **kwargs: Any) -> RemoteProtocolError:
    exc = _reject(data, **kwargs)
    hint = _hint(exc)
    assert hint.id is None
    assert hint.error.code == PARSE_ERROR
    assert hint.error.message.startswith("Parse error")
    assert hint.error.data is NO_DATA
    return exc


def assert_invalid_request(
    data: bytes | str, echoed_id: str | int | None = None, **kwargs: Any
) -> RemoteProtocolError:
    exc = _reject(data, **kwargs)
    hint = _hint(exc)
    assert hint.error.code == INVALID_REQUEST
    assert hint.error.message.startswith("Invalid Request: ")
    assert hint.error.message == str(exc)
    assert hint.id == echoed_id
    assert type(hint.id) is type(echoed_id)
    return exc


def assert_bad_response(data: bytes | str) -> RemoteProtocolError:
    exc = _reject(data)
    assert exc.error_hint is None
    assert str(exc).startswith("Invalid response: ")
    return exc


# ---------------------------------------------------------------- valid messages


def test_decode_request() -> None:
    assert decode(TOOLS_CALL) == Request(
        id=42,
        method="tools/call",
        params={"name": "search", "arguments": {"query": "trio", "limit": 10}},
    )


def test_decode_accepts_str_and_string_ids() -> None:
    assert decode('{"jsonrpc":"2.0","id":"abc","method":"ping"}') == Request(
        id="abc", method="ping"
    )


@pytest.mark.parametrize("request_id", [0, -1, 2**63, "", "ünï", "1"])
def test_decode_request_ids(request_id: str | int) -> None:
    data = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    message = decode(data)
    assert isinstance(message, Request)
    assert message.id == request_id
    assert type(message.id) is type(request_id)


def test_decode_notification() -> None:
    assert decode(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == Notification(
        method="notifications/initialized"
    )
    assert decode(b'{"jsonrpc":"2.0","method":"n","params":{"a":[1,2]}}') == Notification(
        method="n", params={"a": [1, 2]}
    )


def test_decode_response() -> None:
    assert decode(b'{"jsonrpc":"2.0","id":1,"result":{}}') == Response(id=1, result={})
    assert decode(b'{"result":{"x":null},"id":"r","jsonrpc":"2.0"}') == Response(
        id="r", result={"x": None}
    )


def test_decode_error_response() -> None:
    message = decode(b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}')
    assert message == ErrorResponse(id=7, error=ErrorObject(code=-32601, message="nope"))
    assert isinstance(message, ErrorResponse)
    assert message.error.data is NO_DATA


@pytest.mark.parametrize("data", [None, 0, "x", [1], {"k": "v"}])
def test_decode_error_response_data(data: Any) -> None:
    text = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m", "data": data}}
    )
    message = decode(text)
    assert isinstance(message, ErrorResponse)
    assert message.error.data == data


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}',
        '{"jsonrpc":"2.0","error":{"code":-1,"message":"m"}}',
    ],
)
def test_error_response_id_may_be_null_or_absent(text: str) -> None:
    assert decode(text) == ErrorResponse(id=None, error=ErrorObject(code=-1, message="m"))


def test_unknown_members_are_ignored() -> None:
    text = '{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"a":1},"_meta":null}'
    assert decode(text) == Request(id=1, method="ping")


def test_whitespace_around_the_json_is_fine() -> None:
    assert decode(b' \t{"jsonrpc":"2.0","method":"m"}\r\n ') == Notification(method="m")


# ---------------------------------------------------------------- B1, B2: parse errors


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0",',
        b'{"jsonrpc":"2.0","method":"x"',
        b"",
        b"   ",
        b"{'jsonrpc':'2.0'}",
        b'{"jsonrpc":"2.0","method":"x"}}',
        b'{"jsonrpc":"2.0","method":"x"} {}',
        b'{"a":1,}',
        b'{"a":"\x01"}',
        b"nul",
        b'{"jsonrpc":"2.0","method":"x\\q"}',
    ],
)
def test_malformed_json_is_parse_error(data: bytes) -> None:
    assert_parse_error(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}',
        b'{"jsonrpc":"2.0","id":"\xc3","method":"x"}',
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\xed\xa0\x80"}}',  # surrogate
        b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}',  # overlong
        b"\xff",
    ],
)
def test_invalid_utf8_is_parse_error(data: bytes) -> None:
    exc = assert_parse_error(data)
    assert "UTF-8" in str(exc)


def test_bom_is_rejected() -> None:
    assert_parse_error(b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"x"}')
    assert_parse_error('\ufeff{"jsonrpc":"2.0","method":"x"}')


def test_utf16_is_not_sniffed() -> None:
    assert_parse_error('{"jsonrpc":"2.0","method":"x"}'.encode("utf-16"))
    assert_parse_error('{"jsonrpc":"2.0","method":"x"}'.encode("utf-32-le"))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
def test_non_finite_numbers_are_parse_errors(literal: str) -> None:
    assert_parse_error('{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":' + literal + "}}")


def test_huge_integer_is_parse_error() -> None:  # B9
    assert_parse_error(
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":' + b"9" * 10**6 + b"}}"
    )
    assert_parse_error(b'{"jsonrpc":"2.0","id":' + b"1" * 10**6 + b',"method":"x"}')


def test_huge_integer_is_refused_even_without_the_interpreter_limit() -> None:
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert_parse_error(b'{"jsonrpc":"2.0","id":' + b"1" * 10**6 + b',"method":"x"}')
        assert decode(b'{"jsonrpc":"2.0","id":' + b"1" * 100 + b',"method":"x"}') == Request(
            id=int("1" * 100), method="x"
        )
    finally:
        sys.set_int_max_str_digits(previous)


def test_long_floats_and_integers_within_limits_decode() -> None:
    message = decode(
        '{"jsonrpc":"2.0","method":"x","params":{"f":0.' + "0" * 5000 + '1,"i":' + "7" * 4000 + "}}"
    )
    assert isinstance(message, Notification)
    assert message.params is not None
    assert message.params["i"] == int("7" * 4000)


# ---------------------------------------------------------------- B9: nesting depth


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_hundred_thousand_deep_nesting_is_parse_error(opener: bytes) -> None:
    closer = b"]" if opener == b"[" else b"}"
    body = opener * 100_000 + b"1" + closer * 100_000
    exc = assert_parse_error(b'{"jsonrpc":"2.0","method":"x","params":{"a":' + body + b"}}")
    assert "deep" in str(exc)
    assert_parse_error(opener * 100_000)  # unterminated too: still a parse error, no crash


def _nested(depth: int) -> bytes:
    # The message object is level 1 and params level 2; then alternate arrays and objects.
    inner = b"0"
    for level in range(depth - 2):
        inner = b"[" + inner + b"]" if level % 2 else b'{"k":' + inner + b"}"
    return b'{"jsonrpc":"2.0","method":"x","params":{"v":' + inner + b"}}"


def test_depth_limit_is_exact() -> None:
    assert isinstance(decode(_nested(64)), Notification)
    assert_parse_error(_nested(65))
    assert isinstance(decode(_nested(10), max_depth=10), Notification)
    assert_parse_error(_nested(11), max_depth=10)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"s": "[{" * 500, "t": '\\"[['}})
    assert decode(text) == Notification(method="x", params={"s": "[{" * 500, "t": '\\"[['})


def test_many_shallow_containers_are_fine() -> None:
    tools = [
        {"name": f"t{i}", "inputSchema": {"type": "object", "properties": {}}} for i in range(500)
    ]
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})
    assert decode(text) == Response(id=1, result={"tools": tools})


def test_depth_check_handles_str_input_with_surrogates() -> None:
    template = '{"jsonrpc":"2.0","method":"x","params":{"s":"\ud800","l":%s}}'
    assert_parse_error(template % ("[" * 80 + "]" * 80))
    shallow = decode(template % ("[" + ",".join(["[]"] * 80) + "]"))
    assert shallow == Notification(method="x", params={"s": "\ud800", "l": [[]] * 80})


def test_unbalanced_brackets_past_the_cheap_check_are_parse_errors() -> None:
    assert_parse_error(b'"x"]]]{}{}{}', max_depth=2)
    assert_parse_error(b"]" * 100 + b"{}" * 70)


def test_recursion_error_never_escapes() -> None:
    assert_parse_error(b"[" * 100_000 + b"]" * 100_000, max_depth=10**9)


# ---------------------------------------------------------------- B3, B4: not an object


@pytest.mark.parametrize("text", ["42", '"x"', "null", "true", "false", "1.5", "-0"])
def test_scalars_are_invalid_requests(text: str) -> None:
    exc = assert_invalid_request(text)
    assert "JSON object" in str(exc)


@pytest.mark.parametrize(
    "text",
    ["[]", '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]'],
)
def test_arrays_are_refused_without_allow_batch(text: str) -> None:
    assert_invalid_request(text)


def test_batch_with_allow_batch() -> None:
    text = (
        '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},'
        '{"jsonrpc":"2.0","id":3,"result":{}}]'
    )
    assert decode(text, allow_batch=True) == [
        Request(id=1, method="a"),
        Notification(method="n"),
        Response(id=3, result={}),
    ]
    assert decode('[{"jsonrpc":"2.0","method":"n"}]', allow_batch=True) == [
        Notification(method="n")
    ]


def test_a_single_object_with_allow_batch_is_not_a_list() -> None:
    assert decode('{"jsonrpc":"2.0","method":"n"}', allow_batch=True) == Notification(method="n")


def test_empty_batch_is_invalid() -> None:
    exc = assert_invalid_request("[]", allow_batch=True)
    assert "empty batch" in str(exc)


def test_invalid_batch_element_fails_the_whole_batch_with_its_own_error() -> None:
    text = '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":5}]'
    assert_invalid_request(text, echoed_id=2, allow_batch=True)
    assert_invalid_request('[{"jsonrpc":"2.0","method":"a"}, 3]', allow_batch=True)
    assert_invalid_request('[[{"jsonrpc":"2.0","method":"a"}]]', allow_batch=True)


# ---------------------------------------------------------------- B5: wrong shapes


@pytest.mark.parametrize(
    "message",
    [
        {"id": 1, "method": "x"},
        {"jsonrpc": "1.0", "id": 1, "method": "x"},
        {"jsonrpc": 2.0, "id": 1, "method": "x"},
        {"jsonrpc": None, "id": 1, "method": "x"},
        {"jsonrpc": "2.0 ", "id": 1, "method": "x"},
    ],
)
def test_jsonrpc_member_must_be_exactly_2_0(message: dict[str, Any]) -> None:
    exc = assert_invalid_request(json.dumps(message), echoed_id=1)
    assert str(exc) == 'Invalid Request: jsonrpc must be "2.0"'


@pytest.mark.parametrize("method", [1, None, "", [], {}, True])
def test_method_must_be_a_non_empty_string(method: Any) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": "a", "method": method})
    exc = assert_invalid_request(text, echoed_id="a")
    assert str(exc) == "Invalid Request: method must be a non-empty string"
    # A notification-shaped message has no id to echo: the hint uses null, as JSON-RPC asks.
    assert_invalid_request(json.dumps({"jsonrpc": "2.0", "method": method}))


@pytest.mark.parametrize("params", [1, "x", [1, 2], [], None, True])
def test_params_must_be_an_object(params: Any) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "m", "params": params})
    exc = assert_invalid_request(text, echoed_id=9)
    assert str(exc) == "Invalid Request: params must be an object"


@pytest.mark.parametrize("extra", [{"result": {}}, {"error": {"code": 1, "message": "m"}}])
def test_request_with_result_or_error_is_invalid(extra: dict[str, Any]) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "m", **extra})
    exc = assert_invalid_request(text, echoed_id=5)
    assert "cannot have result or error" in str(exc)


def test_message_with_neither_method_nor_result_is_invalid_request() -> None:
    exc = assert_invalid_request('{"jsonrpc":"2.0","id":3}', echoed_id=3)
    assert str(exc) == "Invalid Request: message has no method"
    assert_invalid_request("{}")
    assert_invalid_request('{"foo":"boo"}')


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, "both"),
        ({"jsonrpc": "2.0", "id": 1, "result": []}, "result must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "result": None}, "result must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "result": "ok"}, "result must be an object"),
        ({"jsonrpc": "2.0", "result": {}}, "id must be"),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, "id must be"),
        ({"jsonrpc": "2.0", "id": True, "result": {}}, "id must be"),
        ({"jsonrpc": "2.0", "id": 1.5, "error": {"code": 1, "message": "m"}}, "id must be"),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, "error must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "error": None}, "error must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "m"}}, "code must be an integer"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}}, "code must be"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.0, "message": "m"}}, "code must be"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, "code must be"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "message must be a string"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": 2}}, "message must be"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "jsonrpc"),
        ({"id": 1, "result": {}}, "jsonrpc"),
    ],
)
def test_bad_responses_get_no_reply(message: dict[str, Any], reason: str) -> None:
    exc = assert_bad_response(json.dumps(message))
    assert reason in str(exc)


# ---------------------------------------------------------------- B6: request ids


@pytest.mark.parametrize("request_id", [None, True, False, 1.0, 1.5, {"a": 1}, [1], []])
def test_request_id_must_be_string_or_integer(request_id: Any) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    exc = assert_invalid_request(text, echoed_id=None)
    assert str(exc) == "Invalid Request: id must be a string or integer"


def test_readable_ids_are_echoed_with_their_type() -> None:
    assert_invalid_request('{"jsonrpc":"2.0","id":"7","method":""}', echoed_id="7")
    assert_invalid_request('{"jsonrpc":"2.0","id":7,"method":""}', echoed_id=7)


# ---------------------------------------------------------------- B7: key case and Unicode folding


@pytest.mark.parametrize("key", ["Method", "METHOD", "method ", "méthod", "metho\u0064\u0307"])
def test_case_variants_of_method_are_unknown_members(key: str) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": 1, key: "tools/call"}, ensure_ascii=False)
    exc = assert_invalid_request(text, echoed_id=1)
    assert str(exc) == "Invalid Request: message has no method"


@pytest.mark.parametrize("key", ["param\u017f", "Params", "PARAMS"])
def test_case_variants_of_params_are_ignored(key: str) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", key: {"a": 1}}, ensure_ascii=False)
    assert decode(text) == Request(id=1, method="m", params=None)


def test_case_variants_of_jsonrpc_id_and_result() -> None:
    assert_invalid_request('{"JSONRPC":"2.0","id":1,"method":"m"}', echoed_id=1)
    # "ID" is not the id: this is a notification, and the unknown member is ignored.
    assert decode('{"jsonrpc":"2.0","ID":1,"method":"m"}') == Notification(method="m")
    assert_invalid_request('{"jsonrpc":"2.0","id":1,"Result":{}}', echoed_id=1)
    assert_invalid_request('{"jsonrpc":"2.0","id":1,"resul\u017f":{}}', echoed_id=1)


# ---------------------------------------------------------------- B8: duplicate keys


def test_duplicate_id_echoes_null() -> None:
    exc = assert_invalid_request('{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}', echoed_id=None)
    assert str(exc) == "Invalid Request: duplicate member name"


def test_duplicate_method_echoes_the_id() -> None:
    assert_invalid_request('{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}', echoed_id=1)
    assert_invalid_request('{"jsonrpc":"2.0","id":"x","method":"a","method":"a"}', echoed_id="x")


def test_nested_duplicate_echoes_the_id() -> None:
    text = '{"jsonrpc":"2.0","id":4,"method":"m","params":{"a":{"b":1,"b":1}}}'
    assert_invalid_request(text, echoed_id=4)
    text = '{"jsonrpc":"2.0","id":4,"method":"m","params":{"l":[{"x":1,"x":2}]}}'
    assert_invalid_request(text, echoed_id=4)


def test_duplicate_with_unreadable_id_echoes_null() -> None:
    assert_invalid_request('{"jsonrpc":"2.0","id":true,"method":"a","method":"b"}')


def test_duplicate_in_a_response_gets_no_reply() -> None:
    exc = assert_bad_response('{"jsonrpc":"2.0","id":1,"result":{},"result":{}}')
    assert "duplicate" in str(exc)
    assert_bad_response('{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":1}}')


def test_duplicate_in_a_batch() -> None:
    text = '[{"jsonrpc":"2.0","id":1,"method":"a","id":1}]'
    assert_invalid_request(text, allow_batch=True)
    assert_invalid_request(text)


def test_duplicate_followed_by_malformed_json_is_parse_error() -> None:
    assert_parse_error('{"jsonrpc":"2.0","id":1,"id":1,"method":')
    assert_parse_error('{"a":1,"a":2,"n":NaN}')


# ---------------------------------------------------------------- error message hygiene


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"SECRET\xff"}',
        b'{"jsonrpc":"2.0","id":1,"method":"SECRET","params":"SECRET"}',
        b'{"jsonrpc":"SECRET","id":1,"method":"x"}',
        b'{"SECRET":1,"SECRET":2}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":"SECRET","message":"m"}}',
        b"SECRET",
    ],
)
def test_error_messages_never_echo_input(data: bytes) -> None:
    exc = _reject(data)
    assert "SECRET" not in str(exc)
    assert "Traceback" not in str(exc)
    if exc.error_hint is not None:
        assert "SECRET" not in exc.error_hint.error.message
    assert exc.__cause__ is None
    assert exc.__suppress_context__ or exc.__context__ is None


# ---------------------------------------------------------------- decode_value and misuse


def test_decode_value() -> None:
    assert decode_value({"jsonrpc": "2.0", "id": 1, "method": "m"}) == Request(id=1, method="m")
    assert decode_value([{"jsonrpc": "2.0", "method": "m"}], allow_batch=True) == [
        Notification(method="m")
    ]
    with pytest.raises(RemoteProtocolError):
        decode_value([{"jsonrpc": "2.0", "method": "m"}])
    with pytest.raises(RemoteProtocolError):
        decode_value(object())
    with pytest.raises(RemoteProtocolError):
        decode_value({"jsonrpc": "2.0", "id": 1, "method": "m", "params": ("a",)})


def test_decode_accepts_bytearray_and_memoryview() -> None:
    assert decode(bytearray(TOOLS_CALL)) == decode(TOOLS_CALL)  # type: ignore[arg-type]
    assert decode(memoryview(TOOLS_CALL)) == decode(TOOLS_CALL)  # type: ignore[arg-type]


@pytest.mark.parametrize("data", [5, None, {"jsonrpc": "2.0"}])
def test_decode_of_a_non_text_is_local_misuse(data: Any) -> None:
    with pytest.raises(LocalProtocolError):
        decode(data)


# ---------------------------------------------------------------- encoding


def test_encode_is_compact_utf8_without_newline() -> None:
    message = Request(id=1, method="tools/call", params={"q": "héllo\nwörld", "n": [1, 2.5, None]})
    data = encode(message)
    expected = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
    expected += '{"q":"héllo\\nwörld","n":[1,2.5,null]}}'
    assert data == expected.encode()
    assert b"\n" not in data
    assert b"\r" not in encode(Notification(method="m", params={"s": "\r\u2028"}))
    assert decode(data) == message


def test_encode_every_kind() -> None:
    assert encode(Notification(method="m")) == b'{"jsonrpc":"2.0","method":"m"}'
    assert encode(Response(id="a", result={})) == b'{"jsonrpc":"2.0","id":"a","result":{}}'
    assert (
        encode(ErrorResponse(id=None, error=ErrorObject(code=-32700, message="Parse error")))
        == b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
    )
    with_data = ErrorResponse(id=1, error=ErrorObject(code=1, message="m", data=None))
    assert (
        encode(with_data)
        == b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}'
    )


def test_to_value() -> None:
    params = {"a": 1}
    value = to_value(Request(id=1, method="m", params=params))
    assert value == {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": 1}}
    assert value["params"] is params
    assert to_value(Request(id=1, method="m")) == {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert (
        "data" not in to_value(ErrorResponse(id=1, error=ErrorObject(code=1, message="m")))["error"]
    )
    with pytest.raises(LocalProtocolError):
        to_value({"jsonrpc": "2.0"})  # type: ignore[arg-type]


def test_encode_batch() -> None:
    batch: list[Message] = [Request(id=1, method="a"), Notification(method="n")]
    data = encode(batch)
    assert data == b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]'
    assert decode(data, allow_batch=True) == batch
    assert encode((Response(id=1, result={}),)) == b'[{"jsonrpc":"2.0","id":1,"result":{}}]'


@pytest.mark.parametrize(
    "bad",
    [
        [],
        (),
        "not a message",
        b"bytes",
        {"jsonrpc": "2.0"},
        5,
        None,
        [Request(id=1, method="a"), 5],
    ],
)
def test_encode_refuses_non_messages(bad: Any) -> None:
    with pytest.raises(LocalProtocolError):
        encode(bad)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1, 2}, object(), b"x"])
def test_encode_refuses_non_json_params(value: Any) -> None:
    with pytest.raises(LocalProtocolError):
        encode(Notification(method="m", params={"v": value}))


def test_encode_refuses_cycles() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(LocalProtocolError):
        encode(Notification(method="m", params=cycle))


def test_lone_surrogates_round_trip_as_escapes() -> None:
    message = decode(b'{"jsonrpc":"2.0","method":"m","params":{"s":"\\ud800x\\u00e9"}}')
    assert message == Notification(method="m", params={"s": "\ud800x\u00e9"})
    data = encode(message)
    assert data == b'{"jsonrpc":"2.0","method":"m","params":{"s":"\\ud800x\\u00e9"}}'
    assert decode(data) == message


# ---------------------------------------------------------------- events


@pytest.mark.parametrize("bad_id", [True, False, None, 1.0, [], {}, b"1"])
def test_request_refuses_bad_ids(bad_id: Any) -> None:
    with pytest.raises(LocalProtocolError):
        Request(id=bad_id, method="m")
    with pytest.raises(LocalProtocolError):
        Response(id=bad_id, result={})


def test_event_validators() -> None:
    for bad in ("", None, 1):
        with pytest.raises(LocalProtocolError):
            Request(id=1, method=bad)  # type: ignore[arg-type]
        with pytest.raises(LocalProtocolError):
            Notification(method=bad)  # type: ignore[arg-type]
    params: Any
    for params in ([], "x", 1):
        with pytest.raises(LocalProtocolError):
            Request(id=1, method="m", params=params)
        with pytest.raises(LocalProtocolError):
            Notification(method="m", params=params)
    with pytest.raises(LocalProtocolError):
        Response(id=1, result=None)  # type: ignore[arg-type]
    for code in ("1", 1.0, True, None):
        with pytest.raises(LocalProtocolError):
            ErrorObject(code=code, message="m")  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        ErrorObject(code=1, message=None)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        ErrorResponse(id=1, error={"code": 1, "message": "m"})  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        ErrorResponse(id=True, error=ErrorObject(code=1, message="m"))
    assert ErrorResponse(id=None, error=ErrorObject(code=1, message="m")).id is None


def test_events_are_frozen_keyword_only_and_unhashable() -> None:
    request = Request(id=1, method="m", params={})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        request.id = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Request(1, "m")  # type: ignore[call-arg]
    events = [
        request,
        Notification(method="m"),
        Response(id=1, result={}),
        ErrorObject(code=1, message="m"),
        ErrorResponse(id=1, error=ErrorObject(code=1, message="m")),
    ]
    for event in events:
        with pytest.raises(TypeError):
            hash(event)
        assert not hasattr(event, "__dict__")
    assert Request(id=1, method="m") != Request(id="1", method="m")
    assert repr(NO_DATA) == "NO_DATA"


def test_trusted_constructors_match_validated_ones() -> None:
    assert [f.name for f in attrs.fields(Request)] == ["id", "method", "params"]
    assert [f.name for f in attrs.fields(Notification)] == ["method", "params"]
    assert [f.name for f in attrs.fields(Response)] == ["id", "result"]
    assert trusted_request(1, "m", {"a": 1}) == Request(id=1, method="m", params={"a": 1})
    assert trusted_notification("m", None) == Notification(method="m")
    assert trusted_response("x", {}) == Response(id="x", result={})


# ---------------------------------------------------------------- errors


def test_protocol_error_is_abstract() -> None:
    with pytest.raises(TypeError):
        ProtocolError("x")
    assert issubclass(LocalProtocolError, ProtocolError)
    assert issubclass(RemoteProtocolError, ProtocolError)


def test_remote_protocol_error_pickles() -> None:
    hint = ErrorResponse(
        id=3, error=ErrorObject(code=INVALID_REQUEST, message="Invalid Request: x")
    )
    exc = RemoteProtocolError("Invalid Request: x", error_hint=hint, fatal=True)
    copy = pickle.loads(pickle.dumps(exc))
    assert (str(copy), copy.error_hint, copy.fatal) == ("Invalid Request: x", hint, True)

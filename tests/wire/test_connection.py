"""The h11-style Connection: three verbs, sentinels, recovery after bad lines, fatal overflow."""

from __future__ import annotations

import pytest

from trimcp.wire import (
    CLOSED,
    INVALID_REQUEST,
    NEED_DATA,
    PARSE_ERROR,
    Connection,
    ErrorObject,
    ErrorResponse,
    LocalProtocolError,
    Message,
    Notification,
    RemoteProtocolError,
    Request,
    Response,
)

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def _events(conn: Connection) -> list[object]:
    out: list[object] = []
    while True:
        event = conn.next_event()
        out.append(event)
        if event is NEED_DATA or event is CLOSED:
            return out


def test_need_data_then_message_then_closed() -> None:
    conn = Connection()
    assert conn.next_event() is NEED_DATA
    conn.receive_data(PING[:10])
    assert conn.next_event() is NEED_DATA
    conn.receive_data(PING[10:])
    assert conn.next_event() == Request(id=1, method="ping")
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    assert conn.next_event() is CLOSED
    assert conn.next_event() is CLOSED


def test_messages_are_handed_out_before_closed() -> None:
    conn = Connection()
    conn.receive_data(PING + b'{"jsonrpc":"2.0","method":"n"}')
    conn.receive_data(b"")
    assert _events(conn) == [Request(id=1, method="ping"), Notification(method="n"), CLOSED]


def test_send_appends_newline() -> None:
    conn = Connection()
    assert conn.send(Response(id=1, result={})) == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    batch = conn.send([Notification(method="a"), Notification(method="b")])
    assert batch == b'[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]\n'
    with pytest.raises(LocalProtocolError):
        conn.send("nope")  # type: ignore[arg-type]


def test_send_and_receive_round_trip() -> None:
    sender, receiver = Connection(), Connection()
    messages: list[Message] = [
        Request(id="a", method="tools/call", params={"name": "x\ny"}),
        Notification(method="notifications/progress", params={"progress": 0.5}),
        Response(id=2, result={"content": []}),
        ErrorResponse(id=None, error=ErrorObject(code=-32700, message="Parse error")),
    ]
    receiver.receive_data(b"".join(sender.send(m) for m in messages))
    assert _events(receiver) == [*messages, NEED_DATA]


def test_malformed_line_then_ping_still_answered() -> None:  # B1
    conn = Connection()
    conn.receive_data(b'{"jsonrpc":"2.0",\n' + PING)
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert not info.value.fatal
    assert info.value.error_hint is not None
    assert info.value.error_hint.error.code == PARSE_ERROR
    assert info.value.error_hint.id is None
    assert conn.next_event() == Request(id=1, method="ping")


def test_several_bad_lines_each_raise_once() -> None:
    conn = Connection()
    conn.receive_data(b"42\n\xff\n[]\n" + b'{"jsonrpc":"2.0","id":5,"method":5}\n' + PING)
    codes = []
    for _ in range(4):
        with pytest.raises(RemoteProtocolError) as info:
            conn.next_event()
        assert info.value.error_hint is not None
        codes.append((info.value.error_hint.error.code, info.value.error_hint.id))
    assert codes == [
        (INVALID_REQUEST, None),
        (PARSE_ERROR, None),
        (INVALID_REQUEST, None),
        (INVALID_REQUEST, 5),
    ]
    assert conn.next_event() == Request(id=1, method="ping")


def test_bad_response_line_has_no_hint_and_is_not_fatal() -> None:
    conn = Connection()
    conn.receive_data(b'{"jsonrpc":"2.0","id":1,"result":5}\n' + PING)
    with pytest.raises(RemoteProtocolError) as info:
        conn.next_event()
    assert info.value.error_hint is None
    assert conn.next_event() == Request(id=1, method="ping")


def test_batches_follow_allow_batch() -> None:
    line = b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]\n'
    conn = Connection()
    conn.receive_data(line)
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    conn.allow_batch = True  # negotiated 2025-03-26
    conn.receive_data(line + PING)
    assert _events(conn) == [
        Request(id=1, method="a"),
        Notification(method="b"),
        Request(id=1, method="ping"),
        NEED_DATA,
    ]
    assert Connection(allow_batch=True).allow_batch


def test_batch_messages_come_before_eof() -> None:
    conn = Connection(allow_batch=True)
    conn.receive_data(b'[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]')
    conn.receive_data(b"")
    assert _events(conn) == [Notification(method="a"), Notification(method="b"), CLOSED]


def test_max_depth_is_passed_through() -> None:
    conn = Connection(max_depth=3)
    conn.receive_data(b'{"jsonrpc":"2.0","method":"m","params":{"a":{"b":[]}}}\n')
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    conn.receive_data(b'{"jsonrpc":"2.0","method":"m","params":{"a":1}}\n')
    assert conn.next_event() == Notification(method="m", params={"a": 1})


def test_oversized_line_is_fatal_forever() -> None:  # B26
    conn = Connection(max_line=64)
    conn.receive_data(PING + b"x" * 100)
    assert conn.next_event() == Request(id=1, method="ping")
    with pytest.raises(RemoteProtocolError) as first:
        conn.next_event()
    assert first.value.fatal
    hint = first.value.error_hint
    assert hint is not None
    assert hint.error.code == INVALID_REQUEST
    assert hint.id is None
    conn.receive_data(b"\n" + PING)
    for _ in range(3):
        with pytest.raises(RemoteProtocolError) as again:
            conn.next_event()
        assert again.value is first.value
    # The traceback does not grow with every re-raise.
    assert again.value.__traceback__ is not None
    assert (
        again.value.__traceback__.tb_next is None
        or again.value.__traceback__.tb_next.tb_next is None
    )
    conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_receive_data_after_eof_is_misuse() -> None:
    conn = Connection()
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError):
        conn.receive_data(PING)


def test_sentinels() -> None:
    assert repr(NEED_DATA) == "NEED_DATA"
    assert repr(CLOSED) == "CLOSED"
    with pytest.raises(TypeError):
        NEED_DATA()
    with pytest.raises(TypeError):
        CLOSED()

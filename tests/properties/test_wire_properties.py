"""Hypothesis properties of the wire layer (style.md section 11; design.md invariant 1).

(a) any bytes give messages or RemoteProtocolError, nothing else (decode, Connection, SSEDecoder);
(b) feeding a stream whole, one byte at a time, or in random chunks gives the same outcome;
(c) encode/decode round trips for every message kind;
(d) SSE encode -> decode round trips.

No profile is loaded here: the suite-wide profile (``max_examples`` etc.) comes from the lead's
conftest, so these tests set only what they must (no deadline where byte-at-a-time feeding makes
timing noisy).
"""

from __future__ import annotations

import contextlib
import json
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.wire import (
    CLOSED,
    NEED_DATA,
    NO_DATA,
    Connection,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    RemoteProtocolError,
    Request,
    Response,
    SSEDecoder,
    SSEEvent,
    decode,
    encode,
    encode_sse,
    to_value,
)
from trimcp.wire._json import DEFAULT_MAX_DEPTH, DuplicateMembers, parse_json

# ---------------------------------------------------------------- strategies

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
request_ids = st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=12)
methods = st.text(min_size=1, max_size=20)
params = st.none() | json_objects

requests = st.builds(Request, id=request_ids, method=methods, params=params)
notifications = st.builds(Notification, method=methods, params=params)
responses = st.builds(Response, id=request_ids, result=json_objects)
error_objects = st.builds(
    ErrorObject,
    code=st.integers(min_value=-(2**40), max_value=2**40),
    message=st.text(max_size=20),
    data=st.just(NO_DATA) | json_values,
)
error_responses = st.builds(ErrorResponse, id=st.none() | request_ids, error=error_objects)
messages: st.SearchStrategy[Message] = requests | notifications | responses | error_responses

# Objects built from the member names that matter (and their case/Unicode variants), with values
# of every type: these reach every classification branch, which random bytes rarely do.
KEYS = ["jsonrpc", "id", "method", "params", "result", "error", "Method", "ID", "param\u017f", "x"]
member_values = st.sampled_from(["2.0", "1.0", "", "ping"]) | json_values
shaped_objects = st.dictionaries(st.sampled_from(KEYS), member_values, max_size=6)


@st.composite
def json_ish_bytes(draw: st.DrawFn) -> bytes:
    """Mostly-plausible wire bytes: valid messages, shaped objects and arbitrary JSON, then
    optionally truncated, spliced with random bytes, or given a duplicate member."""
    kind = draw(st.sampled_from(["message", "shaped", "value", "batch"]))
    if kind == "message":
        data = encode(draw(messages))
    elif kind == "shaped":
        data = json.dumps(draw(shaped_objects), ensure_ascii=draw(st.booleans())).encode()
    elif kind == "batch":
        data = json.dumps(
            [json.loads(encode(m)) for m in draw(st.lists(messages, max_size=3))]
        ).encode()
    else:
        data = json.dumps(draw(json_values)).encode()
    mutation = draw(st.sampled_from(["none", "truncate", "splice", "duplicate"]))
    if mutation == "truncate" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif mutation == "splice":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=4)) + data[at:]
    elif mutation == "duplicate" and data.startswith(b"{") and len(data) > 2:
        data = b'{"id":1,' + data[1:] if b'"id"' in data else b'{"method":"a",' + data[1:]
    return data


any_bytes = st.binary(max_size=200) | json_ish_bytes()


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` cut at random points."""
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in pairwise(bounds) if b > a]


def _outcome(exc: RemoteProtocolError) -> tuple[str, Any, bool]:
    return ("error", (str(exc), exc.error_hint, exc.fatal), exc.fatal)


# ------------------------------------------------------------ (a) nothing but RemoteProtocolError


def _check_decoded(result: Message | list[Message]) -> None:
    items = result if isinstance(result, list) else [result]
    assert items
    for item in items:
        assert isinstance(item, (Request, Notification, Response, ErrorResponse))


def _decode_or_error(data: bytes | str, allow_batch: bool) -> Any:
    try:
        return decode(data, allow_batch=allow_batch)
    except RemoteProtocolError as exc:
        return exc


@given(any_bytes, st.booleans())
def test_decode_gives_messages_or_remote_protocol_error(data: bytes, allow_batch: bool) -> None:
    result = _decode_or_error(data, allow_batch)
    if isinstance(result, RemoteProtocolError):
        assert not result.fatal
        hint = result.error_hint
        if hint is not None:
            assert hint.error.code in (-32700, -32600)
            assert hint.id is None or isinstance(hint.id, (str, int))
            encode(hint)  # always sendable
        return
    _check_decoded(result)
    # Whatever decodes re-encodes.
    assert isinstance(encode(result), bytes)


@given(st.text(max_size=100) | json_ish_bytes().map(lambda b: b.decode("utf-8", "replace")))
def test_decode_of_str_gives_messages_or_remote_protocol_error(text: str) -> None:
    with contextlib.suppress(RemoteProtocolError):
        _check_decoded(decode(text, allow_batch=True))


def _next(conn: Connection) -> Any:
    try:
        return conn.next_event()
    except RemoteProtocolError as exc:
        return exc


def _drive_connection(chunks: list[bytes], allow_batch: bool, max_line: int) -> list[Any]:
    """Feed ``chunks`` then EOF, pulling events after each; return what came out, in order."""
    conn = Connection(allow_batch=allow_batch, max_line=max_line)
    out: list[Any] = []
    for chunk in [*chunks, b""]:
        conn.receive_data(chunk)
        while (event := _next(conn)) is not NEED_DATA:
            if isinstance(event, RemoteProtocolError):
                out.append(_outcome(event))
                if event.fatal:
                    assert _next(conn) is event  # fatal errors repeat
                    return out
            elif event is CLOSED:
                out.append("CLOSED")
                return out
            else:
                assert isinstance(event, (Request, Notification, Response, ErrorResponse))
                out.append(event)
    raise AssertionError("EOF was fed but CLOSED never came")


lines_stream = st.lists(any_bytes, max_size=6).map(lambda parts: b"\n".join(parts)) | st.lists(
    json_ish_bytes(), max_size=6
).map(lambda parts: b"".join(p + b"\r\n" for p in parts))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), lines_stream, st.booleans(), st.sampled_from([64, 1000, 2**20]))
def test_connection_outcome_is_independent_of_chunking(
    data: st.DataObject, stream: bytes, allow_batch: bool, max_line: int
) -> None:
    whole = _drive_connection([stream], allow_batch, max_line)
    bytewise = _drive_connection(
        [stream[i : i + 1] for i in range(len(stream))], allow_batch, max_line
    )
    randomly = _drive_connection(data.draw(chunked(stream)), allow_batch, max_line)
    assert whole == bytewise == randomly
    assert whole[-1] == "CLOSED" or whole[-1][2]  # ends in CLOSED or a fatal error


def _feed_sse(decoder: SSEDecoder, chunk: bytes) -> list[SSEEvent] | RemoteProtocolError:
    try:
        return decoder.feed(chunk)
    except RemoteProtocolError as exc:
        return exc


def _drive_sse(chunks: list[bytes], max_event_size: int) -> tuple[list[SSEEvent], Any, str, Any]:
    decoder = SSEDecoder(max_event_size=max_event_size)
    events: list[SSEEvent] = []
    for chunk in [*chunks, b""]:
        got = _feed_sse(decoder, chunk)
        if isinstance(got, RemoteProtocolError):
            assert got.fatal
            assert got.error_hint is None
            return events, str(got), decoder.last_event_id, decoder.retry
        assert all(isinstance(event, SSEEvent) for event in got)
        events += got
    return events, None, decoder.last_event_id, decoder.retry


sse_lines = st.sampled_from(
    [
        b"data: x",
        b"data:",
        b"data",
        b"id: 1",
        b"id",
        b"id: a\x00b",
        b"event: e",
        b"retry: 10",
        b"retry: x",
        b": c",
        b"",
        b"\xef\xbb\xbf",
        b"\xff",
        b"data: \xc3\xa9",
        b"field: v",
    ]
) | st.binary(max_size=12)
sse_streams = st.lists(
    st.tuples(sse_lines, st.sampled_from([b"\n", b"\r", b"\r\n"])), max_size=12
).map(lambda pairs: b"".join(line + end for line, end in pairs)) | st.binary(max_size=120)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), sse_streams, st.sampled_from([16, 4096]))
def test_sse_outcome_is_independent_of_chunking(
    data: st.DataObject, stream: bytes, max_event_size: int
) -> None:
    whole = _drive_sse([stream], max_event_size)
    bytewise = _drive_sse([stream[i : i + 1] for i in range(len(stream))], max_event_size)
    randomly = _drive_sse(data.draw(chunked(stream)), max_event_size)
    if whole[1] is None:
        assert whole == bytewise == randomly
    else:
        # After a fatal error the decoder state is not meaningful; events and the error are.
        assert whole[:2] == bytewise[:2] == randomly[:2]


# ---------------------------------------------------------------- (c) round trips


@given(messages)
def test_encode_decode_round_trip(message: Message) -> None:
    data = encode(message)
    assert b"\n" not in data
    assert decode(data) == message
    assert decode(data.decode("utf-8")) == message


class _IntId(int):
    pass


class _StrId(str):
    pass


# Text with lone surrogates too (JSON escapes can carry them into decoded values).
_any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=8)
_written_ids = (
    request_ids | _any_text | st.builds(_IntId, st.integers()) | st.builds(_StrId, _any_text)
)
_written_params = st.none() | st.dictionaries(_any_text, json_values | _any_text, max_size=4)
_written = (
    st.builds(Request, id=_written_ids, method=_any_text.filter(bool), params=_written_params)
    | st.builds(Notification, method=_any_text.filter(bool), params=_written_params)
    | st.builds(Response, id=_written_ids, result=_written_params.filter(lambda p: p is not None))
    | messages
)


def _written_by_the_encoder(message: Message) -> bytes:
    """What the stdlib encoder writes for the message's JSON object form."""
    value = to_value(message)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


@given(_written)
def test_encode_writes_what_the_encoder_writes(message: Message) -> None:
    # encode() writes the envelope of a request, notification or response itself around
    # the encoded payload: byte for byte the encoder's text of the whole object.
    assert encode(message) == _written_by_the_encoder(message)


@given(st.lists(messages, min_size=1, max_size=5))
def test_batch_round_trip(batch: list[Message]) -> None:
    assert decode(encode(batch), allow_batch=True) == batch


@settings(deadline=None)
@given(st.data(), st.lists(messages, max_size=6))
def test_connection_round_trip(data: st.DataObject, batch: list[Message]) -> None:
    stream = b"".join(Connection().send(m) for m in batch)
    assert _drive_connection(data.draw(chunked(stream)), False, 2**20) == [*batch, "CLOSED"]


# ---------------------------------------------------------------- (d) SSE round trip

no_cr_lf_nul = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00"), max_size=10
)
sse_data = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40).filter(
    lambda s: s.replace("\r\n", "\n").replace("\r", "\n") != ""
)
sse_events = st.tuples(
    sse_data,
    st.none() | no_cr_lf_nul,
    st.none() | no_cr_lf_nul,
    st.none() | st.integers(min_value=0, max_value=10**12),
)


@settings(deadline=None)
@given(st.data(), st.lists(sse_events, min_size=1, max_size=5))
def test_sse_round_trip(
    data: st.DataObject, specs: list[tuple[str, str | None, str | None, int | None]]
) -> None:
    stream = b"".join(encode_sse(data=d, event=e, id=i, retry=r) for d, e, i, r in specs)
    expected = [
        SSEEvent(
            data=d.replace("\r\n", "\n").replace("\r", "\n"), event=e or "message", id=i, retry=r
        )
        for d, e, i, r in specs
    ]
    events, error, last_id, retry = _drive_sse(data.draw(chunked(stream)), 2**20)
    assert error is None
    assert events == expected
    ids = [i for _, _, i, _ in specs if i is not None]
    assert last_id == (ids[-1] if ids else "")
    retries = [r for _, _, _, r in specs if r is not None]
    assert retry == (retries[-1] if retries else None)


@given(st.lists(st.tuples(st.none() | no_cr_lf_nul, st.none() | st.integers(0, 10**6)), max_size=4))
def test_sse_priming_events_are_not_dispatched(specs: list[tuple[str | None, int | None]]) -> None:
    decoder = SSEDecoder()
    for event_id, retry in specs:
        if event_id is None and retry is None:
            continue
        assert decoder.feed(encode_sse(data=None, id=event_id, retry=retry)) == []
        if event_id is not None:
            assert decoder.last_event_id == event_id
        if retry is not None:
            assert decoder.retry == retry


# ---------------------------------------------------------------- the precise depth scan

tricky_text = st.text(st.sampled_from('[]{}"\\ax/\n\u00e9'), max_size=8)
nested_values = st.recursive(
    st.none() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=30,
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


@given(nested_values, st.integers(0, 8), st.booleans())
def test_depth_scan_is_exact_for_valid_json(value: Any, max_depth: int, ascii_only: bool) -> None:
    from trimcp.wire._json import _too_deep  # the precise scan behind decode's depth cap

    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _too_deep(raw, max_depth) == (_depth(value) > max_depth)


# ------------------------------------------- strict parse against the stdlib's own


def _stdlib_strict(text: str) -> tuple[bool, Any]:
    """What ``json.loads`` makes of ``text`` under the wire's rules (no NaN or
    infinities, no duplicate member names); ``(False, None)`` where it refuses."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if len(dict(items)) != len(items):
            raise ValueError("duplicate")
        return dict(items)

    def refuse(_: str) -> Any:
        raise ValueError("constant")

    def finite(number: str) -> float:
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise ValueError("infinite")
        return value

    try:
        return True, json.loads(
            text, object_pairs_hook=pairs, parse_constant=refuse, parse_float=finite
        )
    except (ValueError, RecursionError):
        return False, None


json_space = st.text(alphabet=" \t\n\r", max_size=3)
json_texts = st.one_of(
    st.tuples(json_space, json_values.map(json.dumps), json_space).map("".join),
    st.tuples(
        json_values.map(json.dumps), st.sampled_from(["", " ", "x", "}", " 1", ",", "\x0c"])
    ).map("".join),
    st.text(alphabet=' \t\n\r{}[]:,"a1eE.-+tnfu\\', max_size=20),
    st.just('{"a": 1, "a": 2}'),
)


@given(json_texts)
def test_parse_json_accepts_what_the_stdlib_accepts(text: str) -> None:
    """The scanner is called directly (no ``JSONDecoder.decode``), so the rules around
    the value (whitespace either side, nothing after it) are trimcp's own: any text is
    accepted exactly when the stdlib, held to the same rules, accepts it, with the same
    value; a refusal is a -32700 or a duplicate-members report, nothing else."""
    ok, expected = _stdlib_strict(text)
    code: int | None = None
    try:
        value = parse_json(text, DEFAULT_MAX_DEPTH)
    except RemoteProtocolError as exc:
        code = exc.error_hint.error.code if exc.error_hint is not None else None
        value = refused = "-32700"
    except DuplicateMembers:
        value = refused = "duplicate"
    else:
        refused = None
    if refused is None:
        assert ok, f"accepted what the stdlib refuses: {text!r}"
        assert json.dumps(value, sort_keys=True) == json.dumps(expected, sort_keys=True)
    else:
        assert not ok, f"refused what the stdlib reads: {text!r}"
        assert refused == "duplicate" or code == -32700

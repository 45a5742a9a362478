"""JSON-RPC 2.0 messages to JSON (reading them: ``_codec``).

Encoding produces compact UTF-8 JSON with no newline: ``json`` escapes every control character, so
the output can be framed as one NDJSON line as is. A request, notification or response has its
envelope written here around the payload the C encoder writes (byte for byte what the encoder
makes of the whole object, a property checks): every message passes here, and building and
walking the envelope's dict was a fifth of its encoding.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from ._errors import LocalProtocolError
from ._events import NO_DATA, ErrorResponse, Message, Notification, Request, RequestId, Response

__all__ = ["JSON_CODEC", "encode", "to_value"]


def to_value(message: Message) -> dict[str, Any]:
    """The JSON object form of ``message`` (a fresh dict; the params/result dicts are shared)."""
    if type(message) is Request:
        value: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params is not None:
            value["params"] = message.params
        return value
    if type(message) is Notification:
        value = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            value["params"] = message.params
        return value
    if type(message) is Response:
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if type(message) is ErrorResponse:
        error: dict[str, Any] = {"code": message.error.code, "message": message.error.message}
        if message.error.data is not NO_DATA:
            error["data"] = message.error.data
        return {"jsonrpc": "2.0", "id": message.id, "error": error}
    raise LocalProtocolError(f"cannot encode {type(message).__name__}: not a wire message")


#: The JSON codec messages are read and written with (named in benchmark reports).
JSON_CODEC: Final = "json (stdlib)"

# One C encoder built once: JSONEncoder.encode() would rebuild it on every call (~1 us). No
# circular-reference markers: a cycle ends in RecursionError instead, which encode() reports.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII_ENCODER: Final = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


_Chunks = Callable[[Any, int], Iterable[str]]


def _chunker(ascii: bool) -> _Chunks:
    """The encoder's chunk generator (C when CPython has it), called as
    ``chunks(value, 0)`` and joined by :func:`encode` itself: no Python frame between."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    fallback = _ASCII_ENCODER if ascii else _ENCODER
    if c_make_encoder is None:  # pragma: no cover - CPython always has the accelerator
        return lambda value, _level: fallback.iterencode(value)
    escape = json.encoder.encode_basestring_ascii if ascii else json.encoder.encode_basestring
    chunks: _Chunks = c_make_encoder(
        None, fallback.default, escape, None, ":", ",", False, False, False
    )
    return chunks


_json_chunks: Final = _chunker(ascii=False)
# Lone surrogates (legal as JSON escapes, so they can arrive in decoded params) cannot be UTF-8
# encoded; this one writes them back as \uXXXX escapes instead.
_ascii_json_chunks: Final = _chunker(ascii=True)


_json_string: Final[Callable[[str], str]] = json.encoder.encode_basestring
_ENVELOPE_ID: Final = '{"jsonrpc":"2.0","id":'


def _enveloped(message: object) -> str | None:
    """The JSON text of a request, notification or response (as ``to_value`` then the
    encoder would write it): the envelope's few members written here, the payload by
    the C encoder. ``None`` for any other message, and for an id of a subclass of int
    or str (the general path writes those).

    Raises what the encoder raises for a payload it cannot write (``TypeError``,
    ``ValueError``, ``RecursionError``); ``UnicodeEncodeError`` is the caller's to meet
    when it encodes the text."""
    if message.__class__ is Response:
        head = _id_member(message.id)
        if head is None:
            return None
        return head + ',"result":' + "".join(_json_chunks(message.result, 0)) + "}"
    if message.__class__ is Request:
        head = _id_member(message.id)
        if head is None:
            return None
        head += ',"method":' + _json_string(message.method)
        params = message.params
    elif message.__class__ is Notification:
        head = '{"jsonrpc":"2.0","method":' + _json_string(message.method)
        params = message.params
    else:
        return None
    if params is None:
        return head + "}"
    return head + ',"params":' + "".join(_json_chunks(params, 0)) + "}"


def _id_member(id: RequestId) -> str | None:
    """The envelope up to its id: an int as ``int.__repr__`` writes it, a str quoted."""
    if id.__class__ is int:
        return _ENVELOPE_ID + str(id)
    if id.__class__ is str:
        return _ENVELOPE_ID + _json_string(id)
    return None


def encode(message: Message | Sequence[Message]) -> bytes:
    """Encode one message, or a sequence of messages as a batch array, as compact UTF-8 JSON.

    The result has no trailing newline and never contains a raw CR or LF.

    Raises:
      LocalProtocolError: ``message`` is not a message or a non-empty sequence of messages, or its
        params/result hold something JSON cannot represent (NaN, a set, a cycle...).
    """
    cls = message.__class__
    if cls is Request or cls is Response or cls is Notification:
        # The envelope is written around the payload's JSON: byte for byte what the
        # encoder makes of to_value()'s dict, without building that dict or walking it.
        try:
            text = _enveloped(message)
        except (TypeError, ValueError, RecursionError) as exc:
            raise LocalProtocolError(f"message is not JSON-serialisable: {exc}") from exc
        if text is not None:
            try:
                return text.encode("utf-8")
            except UnicodeEncodeError:
                pass  # a lone surrogate: the general path below writes it escaped
    if isinstance(message, (Request, Notification, Response, ErrorResponse)):
        value: Any = to_value(message)
    elif isinstance(message, Sequence):
        if not message:
            raise LocalProtocolError("cannot encode an empty batch")
        value = [to_value(item) for item in message]
    else:
        raise LocalProtocolError(f"cannot encode {type(message).__name__}: not a wire message")
    try:
        text = "".join(_json_chunks(value, 0))
    except (TypeError, ValueError, RecursionError) as exc:
        raise LocalProtocolError(f"message is not JSON-serialisable: {exc}") from exc
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_ascii_json_chunks(value, 0)).encode("ascii")

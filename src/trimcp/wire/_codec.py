"""JSON-RPC 2.0 messages from JSON, with MCP's restrictions (writing them: ``_encode``).

Decoding contract (the session layer relies on every line of it):

- :func:`decode` raises only :class:`RemoteProtocolError`, for any ``bytes`` or ``str`` input.
  Parse problems (bad UTF-8, a BOM, bad JSON, NaN/Infinity, absurd numbers, nesting deeper than
  ``max_depth``) give -32700 with id null.
- Everything else that is wrong gives -32600. *Request-shaped* messages (a ``method`` member, or no
  ``method``, ``result`` or ``error`` at all) carry a hint that echoes the id when it was a readable
  string or integer, else null; a notification-shaped one (no id) gets id null, as JSON-RPC asks.
  *Response-shaped* messages (``result`` or ``error``, no ``method``) carry ``error_hint=None``:
  nothing is ever sent back for a bad response, since a reply with the peer's id would look like an
  answer to the peer's own request of that id.
- Member names are exact and case-sensitive: ``"Method"``, ``"METHOD"`` or ``"param\\u017f"``
  are unknown members, and unknown members are ignored (forward compatibility). Duplicate names
  in *any* object are -32600.
- ``params`` must be absent or an object (``null`` is refused); ``id`` on a request must be a string
  or integer; an error response may have id null or no id (2025-11-25 made it optional).
- Batches (JSON arrays) are decoded only with ``allow_batch=True`` (the 2025-03-26 revision) and
  come back as a list. An empty batch, or any invalid element, fails the *whole* decode with the
  element's error: partial batches would need a result type that mixes messages and errors, and the
  only revision that allows batches is legacy.
"""

from __future__ import annotations

from typing import Any, Final

from ._codes import INVALID_REQUEST
from ._errors import RemoteProtocolError
from ._events import (
    NO_DATA,
    ErrorObject,
    ErrorResponse,
    Message,
    Response,
    is_request_id,
    trusted_notification,
    trusted_request,
    trusted_response,
)
from ._json import DEFAULT_MAX_DEPTH, DuplicateMembers, parse_json

__all__ = ["DEFAULT_MAX_DEPTH", "decode", "decode_value"]

_ABSENT: Final[Any] = object()  # typed Any so that dict.get(key, _ABSENT) stays Any


def _request_error(reason: str, id: object = None) -> RemoteProtocolError:
    message = "Invalid Request: " + reason
    hint_id = id if is_request_id(id) else None
    hint = ErrorResponse(id=hint_id, error=ErrorObject(code=INVALID_REQUEST, message=message))
    return RemoteProtocolError(message, error_hint=hint)


def _invalid(obj: dict[str, Any], reason: str) -> RemoteProtocolError:
    """The error for an invalid message object, with the reply its shape calls for."""
    if "method" not in obj and ("result" in obj or "error" in obj):
        return RemoteProtocolError("Invalid response: " + reason, error_hint=None)
    return _request_error(reason, obj.get("id"))


def _response(obj: dict[str, Any]) -> Response | ErrorResponse:
    result = obj.get("result", _ABSENT)
    error = obj.get("error", _ABSENT)
    id = obj.get("id", _ABSENT)
    if result is not _ABSENT:
        if error is not _ABSENT:
            raise _invalid(obj, "a response cannot have both result and error")
        # An exact int or str is an id (asked inline first: every answer has one).
        if id.__class__ is not int and id.__class__ is not str and not is_request_id(id):
            raise _invalid(obj, "id must be a string or integer")
        if not isinstance(result, dict):
            raise _invalid(obj, "result must be an object")
        return trusted_response(id, result)
    if id is _ABSENT:
        id = None
    elif id is not None and not is_request_id(id):
        raise _invalid(obj, "id must be a string, integer or null")
    if not isinstance(error, dict):
        raise _invalid(obj, "error must be an object")
    code = error.get("code")
    if not isinstance(code, int) or code is True or code is False:
        raise _invalid(obj, "error code must be an integer")
    message = error.get("message")
    if not isinstance(message, str):
        raise _invalid(obj, "error message must be a string")
    data = error.get("data", NO_DATA)
    return ErrorResponse(id=id, error=ErrorObject(code=code, message=message, data=data))


def _message(obj: Any) -> Message:
    """Classify and validate one decoded JSON value as a message."""
    if not isinstance(obj, dict):
        raise _request_error("message must be a JSON object")
    if obj.get("jsonrpc") != "2.0":
        raise _invalid(obj, 'jsonrpc must be "2.0"')
    method = obj.get("method", _ABSENT)
    if method is _ABSENT:
        if "result" in obj or "error" in obj:
            return _response(obj)
        raise _invalid(obj, "message has no method")
    id = obj.get("id", _ABSENT)
    if (
        id is not _ABSENT
        and id.__class__ is not int
        and id.__class__ is not str
        and not is_request_id(id)
    ):
        raise _invalid(obj, "id must be a string or integer")
    if not isinstance(method, str) or not method:
        raise _invalid(obj, "method must be a non-empty string")
    if "result" in obj or "error" in obj:
        raise _invalid(obj, "a request cannot have result or error")
    params = obj.get("params", _ABSENT)
    if params is _ABSENT:
        params = None
    elif not isinstance(params, dict):
        raise _invalid(obj, "params must be an object")
    if id is _ABSENT:
        return trusted_notification(method, params)
    return trusted_request(id, method, params)


def decode_value(value: Any, *, allow_batch: bool = False) -> Message | list[Message]:
    """Classify an already-parsed JSON value (an HTTP body parsed elsewhere, a test fixture).

    The value must come from a JSON parser that already refused duplicate keys; the rules and errors
    are otherwise those of :func:`decode`.

    Raises:
      RemoteProtocolError: the value is not an acceptable message (see the module docstring).
    """
    if isinstance(value, list):
        if not allow_batch:
            raise _request_error("batches are not supported")
        if not value:
            raise _request_error("empty batch")
        return [_message(element) for element in value]
    return _message(value)


def decode(
    data: bytes | str, *, allow_batch: bool = False, max_depth: int = DEFAULT_MAX_DEPTH
) -> Message | list[Message]:
    """Decode one JSON-RPC message (or, with ``allow_batch``, a batch) from a JSON text.

    Args:
      data: the JSON text: UTF-8 bytes (strict, no BOM) or an already-decoded ``str``.
      allow_batch: accept a JSON array as a batch (only the 2025-03-26 revision allows it).
      max_depth: the deepest nesting of arrays and objects accepted.

    Returns:
      One message, or a non-empty list of messages for a batch.

    Raises:
      RemoteProtocolError: for any unacceptable input, and nothing else; ``error_hint`` is the
        reply to send, or ``None`` when none is due.
    """
    try:
        value = parse_json(data, max_depth)
    except DuplicateMembers as exc:
        lenient = exc.value
        if isinstance(lenient, dict):
            raise _invalid(lenient, "duplicate member name") from None
        raise _request_error("duplicate member name") from None
    if value.__class__ is dict:  # the common case, without a call more
        return _message(value)
    return decode_value(value, allow_batch=allow_batch)

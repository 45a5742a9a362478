"""trimcp's wire layer: JSON-RPC 2.0 as MCP restricts it, sans-IO.

Frozen message classes, a strict codec, NDJSON framing with an h11-style :class:`Connection`, SSE
encoding and decoding, and the error codes. Nothing here does I/O or imports an event loop; a test
(``tests/wire/test_layering.py``) enforces that.

Decoding entry points (:func:`decode`, :meth:`Connection.next_event`, :meth:`SSEDecoder.feed`)
raise nothing but :class:`RemoteProtocolError`, whose ``error_hint`` is the reply to send.
"""

from ._codec import decode as decode
from ._codec import decode_value as decode_value
from ._codes import CONNECTION_CLOSED as CONNECTION_CLOSED
from ._codes import HEADER_MISMATCH as HEADER_MISMATCH
from ._codes import INTERNAL_ERROR as INTERNAL_ERROR
from ._codes import INVALID_PARAMS as INVALID_PARAMS
from ._codes import INVALID_REQUEST as INVALID_REQUEST
from ._codes import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from ._codes import MISSING_CLIENT_CAPABILITY as MISSING_CLIENT_CAPABILITY
from ._codes import PARSE_ERROR as PARSE_ERROR
from ._codes import REQUEST_TIMEOUT as REQUEST_TIMEOUT
from ._codes import RESOURCE_NOT_FOUND as RESOURCE_NOT_FOUND
from ._codes import UNSUPPORTED_PROTOCOL_VERSION as UNSUPPORTED_PROTOCOL_VERSION
from ._codes import URL_ELICITATION_REQUIRED as URL_ELICITATION_REQUIRED
from ._connection import CLOSED as CLOSED
from ._connection import NEED_DATA as NEED_DATA
from ._connection import Connection as Connection
from ._encode import JSON_CODEC as JSON_CODEC
from ._encode import encode as encode
from ._encode import to_value as to_value
from ._errors import LocalProtocolError as LocalProtocolError
from ._errors import ProtocolError as ProtocolError
from ._errors import RemoteProtocolError as RemoteProtocolError
from ._events import NO_DATA as NO_DATA
from ._events import ErrorObject as ErrorObject
from ._events import ErrorResponse as ErrorResponse
from ._events import Message as Message
from ._events import Notification as Notification
from ._events import Request as Request
from ._events import RequestId as RequestId
from ._events import Response as Response
from ._events import is_request_id as is_request_id
from ._events import make_request as make_request
from ._events import make_response as make_response
from ._framing import DEFAULT_MAX_LINE as DEFAULT_MAX_LINE
from ._framing import LineFramer as LineFramer
from ._json import DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH
from ._sse import SSEDecoder as SSEDecoder
from ._sse import SSEEvent as SSEEvent
from ._sse import encode_comment as encode_comment
from ._sse import encode_sse as encode_sse

__all__ = [
    "CLOSED",
    "CONNECTION_CLOSED",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_LINE",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSON_CODEC",
    "METHOD_NOT_FOUND",
    "MISSING_CLIENT_CAPABILITY",
    "NEED_DATA",
    "NO_DATA",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "Connection",
    "ErrorObject",
    "ErrorResponse",
    "LineFramer",
    "LocalProtocolError",
    "Message",
    "Notification",
    "ProtocolError",
    "RemoteProtocolError",
    "Request",
    "RequestId",
    "Response",
    "SSEDecoder",
    "SSEEvent",
    "decode",
    "decode_value",
    "encode",
    "encode_comment",
    "encode_sse",
    "is_request_id",
    "make_request",
    "make_response",
    "to_value",
]

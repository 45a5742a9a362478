"""The four JSON-RPC 2.0 messages, as MCP restricts them.

Every event is a frozen, slotted, keyword-only attrs class marked ``@final`` (h11's rule: a
malformed event must not be constructible, and events are values, not base classes). Construction
validates the *JSON-RPC envelope* only: ids are ``str`` or ``int`` (never ``bool``), methods are
non-empty strings, ``params`` and ``result`` are JSON objects, error codes are integers. What is
inside ``params`` and ``result`` belongs to the protocol layer above. Invalid construction raises
:class:`~trimcp.wire.LocalProtocolError`, because building one is always a bug on this side.

The validators are a few ``isinstance`` checks each: events are built on the hot path, once per
decoded message.

Events hold dicts, so they compare by value but are not hashable (``unsafe_hash=False`` with
``eq=True`` leaves ``__hash__`` as ``None``; a test pins it). They are immutable at the attribute
level only: do not mutate the dicts you put in or get out.
"""

from __future__ import annotations

import enum
from typing import Any, Final, TypeAlias, TypeGuard, final

import attrs

from ._errors import LocalProtocolError

__all__ = [
    "NO_DATA",
    "ErrorObject",
    "ErrorResponse",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "is_request_id",
    "make_request",
    "make_response",
]

RequestId: TypeAlias = str | int
"""A JSON-RPC request id. MCP allows strings and integers only: never null, bool or float."""


class _NoData(enum.Enum):
    NO_DATA = "NO_DATA"

    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA: Final = _NoData.NO_DATA
"""Sentinel for :attr:`ErrorObject.data`: no ``data`` member (``None`` means JSON null)."""


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """Whether ``value`` is a string or an integer (not a bool): a request id, and as
    well a progress token, which has the same type."""
    # bool is an int subclass; its two instances are excluded by identity, which is cheaper than a
    # second isinstance call.
    return isinstance(value, (str, int)) and value is not True and value is not False


def _check_id(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not is_request_id(value):
        raise LocalProtocolError(
            f"{type(instance).__name__}.id must be a string or integer, not {type(value).__name__}"
        )


def _check_optional_id(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        _check_id(instance, attribute, value)


def _check_method(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value:
        raise LocalProtocolError(f"{type(instance).__name__}.method must be a non-empty string")


def _check_optional_object(
    instance: object, attribute: attrs.Attribute[Any], value: object
) -> None:
    if value is not None and not isinstance(value, dict):
        raise LocalProtocolError(
            f"{type(instance).__name__}.{attribute.name} must be a dict or None,"
            f" not {type(value).__name__}"
        )


def _check_object(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, dict):
        raise LocalProtocolError(
            f"{type(instance).__name__}.{attribute.name} must be a dict, not {type(value).__name__}"
        )


def _check_code(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, int) or value is True or value is False:
        raise LocalProtocolError(f"ErrorObject.code must be an integer, not {type(value).__name__}")


def _check_str(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise LocalProtocolError(
            f"{type(instance).__name__}.{attribute.name} must be a string,"
            f" not {type(value).__name__}"
        )


def _check_error_object(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, ErrorObject):
        raise LocalProtocolError(
            f"ErrorResponse.error must be an ErrorObject, not {type(value).__name__}"
        )


@final
@attrs.frozen(kw_only=True, slots=True, unsafe_hash=False)
class Request:
    """A request: it has an id and expects exactly one response with the same id."""

    id: RequestId = attrs.field(validator=_check_id)
    method: str = attrs.field(validator=_check_method)
    params: dict[str, Any] | None = attrs.field(default=None, validator=_check_optional_object)
    """``None`` means the ``params`` member is absent (MCP never sends array params)."""


@final
@attrs.frozen(kw_only=True, slots=True, unsafe_hash=False)
class Notification:
    """A notification: no id, and no reply of any kind is ever due."""

    method: str = attrs.field(validator=_check_method)
    params: dict[str, Any] | None = attrs.field(default=None, validator=_check_optional_object)


@final
@attrs.frozen(kw_only=True, slots=True, unsafe_hash=False)
class Response:
    """A successful response to the request with the same id."""

    id: RequestId = attrs.field(validator=_check_id)
    result: dict[str, Any] = attrs.field(validator=_check_object)


@final
@attrs.frozen(kw_only=True, slots=True, unsafe_hash=False)
class ErrorObject:
    """The ``error`` member of an error response."""

    code: int = attrs.field(validator=_check_code)
    message: str = attrs.field(validator=_check_str)
    data: Any = NO_DATA
    """Any JSON value, or :data:`NO_DATA` when the member is absent."""


@final
@attrs.frozen(kw_only=True, slots=True, unsafe_hash=False)
class ErrorResponse:
    """An error response. ``id`` is ``None`` (JSON null) when the request's id could not be read."""

    id: RequestId | None = attrs.field(validator=_check_optional_id)
    error: ErrorObject = attrs.field(validator=_check_error_object)


Message: TypeAlias = Request | Notification | Response | ErrorResponse
"""Any one JSON-RPC message."""


# Trusted constructors for the decoder's hot path. The codec has already checked every field with
# the same rules as the validators above, so running them again would only double the cost of
# building an event (~0.8 us -> ~0.25 us for a Request). They write the slots directly; a test
# checks that they produce events equal to validated construction and set every attrs field.
_new = object.__new__
_set_request_id = Request.__dict__["id"].__set__
_set_request_method = Request.__dict__["method"].__set__
_set_request_params = Request.__dict__["params"].__set__
_set_notification_method = Notification.__dict__["method"].__set__
_set_notification_params = Notification.__dict__["params"].__set__
_set_response_id = Response.__dict__["id"].__set__
_set_response_result = Response.__dict__["result"].__set__


def trusted_request(id: RequestId, method: str, params: dict[str, Any] | None) -> Request:
    """A :class:`Request` from already-validated fields (decoder use only)."""
    event: Request = _new(Request)
    _set_request_id(event, id)
    _set_request_method(event, method)
    _set_request_params(event, params)
    return event


def make_request(id: RequestId, method: str, params: dict[str, Any] | None) -> Request:
    """``Request(id=id, method=method, params=params)``, with the same checks and errors,
    made in one call where the fields are plainly valid (an int id, a non-empty str
    method, a dict or no params: every request a session sends itself) instead of
    one call per validator."""
    if (
        id.__class__ is int
        and method.__class__ is str
        and method
        and (params is None or params.__class__ is dict)
    ):
        return trusted_request(id, method, params)
    return Request(id=id, method=method, params=params)


def make_response(id: RequestId, result: dict[str, Any]) -> Response:
    """``Response(id=id, result=result)``, with the same checks and errors, made in one
    call where the fields are plainly valid (a str or int id, a dict result: every
    answer a handler's result becomes) instead of one call per validator."""
    if (id.__class__ is int or id.__class__ is str) and result.__class__ is dict:
        return trusted_response(id, result)
    return Response(id=id, result=result)


def trusted_notification(method: str, params: dict[str, Any] | None) -> Notification:
    """A :class:`Notification` from already-validated fields (decoder use only)."""
    event: Notification = _new(Notification)
    _set_notification_method(event, method)
    _set_notification_params(event, params)
    return event


def trusted_response(id: RequestId, result: dict[str, Any]) -> Response:
    """A :class:`Response` from already-validated fields (decoder use only)."""
    event: Response = _new(Response)
    _set_response_id(event, id)
    _set_response_result(event, result)
    return event

"""The one place where an exception raised by a handler becomes a JSON-RPC error.

Policy:

* :class:`~trimcp.dispatch.McpError` (raised on purpose) goes out exactly as raised.
* a cattrs structuring failure is ``-32602 Invalid params`` with the JSON paths of the
  offending members as ``data`` (never Python exception text).
* anything else is ``-32603 Internal error`` with a generic message. The exception,
  with its traceback, is logged here through :mod:`logging` and never reaches the wire,
  because exception text routinely carries secrets, paths and internals.
* an exception group (a handler's own nursery) holding exactly one real error (plus
  any cancellations) is that error: an :class:`McpError` raised in a child task goes out
  as raised (design invariant 9, server side). :func:`single_error` finds it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import trio
from cattrs.errors import BaseValidationError

from trimcp.binding import format_errors
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS, ErrorObject, RequestId

from ._errors import McpError

__all__ = ["error_for_exception", "single_error"]

logger = logging.getLogger("trimcp.dispatch")


#: The groups nurseries raise. Subclasses (cattrs' validation errors) are errors of
#: their own that happen to be groups, and are never taken apart.
_PLAIN_GROUPS = (ExceptionGroup, BaseExceptionGroup)


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if type(exc) in _PLAIN_GROUPS:
            yield from _leaves(exc)  # type: ignore[arg-type]
        else:
            yield exc


def single_error(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one error in a nursery's ``group`` that is not a :class:`trio.Cancelled`, if
    there is exactly one (however deeply nested); ``None`` when there are none or
    several, or when ``group`` is not a plain group (a validation error, say)."""
    if type(group) not in _PLAIN_GROUPS:
        return None
    real = [exc for exc in _leaves(group) if not isinstance(exc, trio.Cancelled)]
    return real[0] if len(real) == 1 else None


def error_for_exception(exc: BaseException, *, method: str, request_id: RequestId) -> ErrorObject:
    """Return the error object that answers a request whose handler raised ``exc``."""
    if isinstance(exc, BaseExceptionGroup):
        exc = single_error(exc) or exc
    if isinstance(exc, McpError):
        return exc.to_error()
    if isinstance(exc, BaseValidationError):
        return ErrorObject(
            code=INVALID_PARAMS,
            message="Invalid params",
            data={"errors": format_errors(exc, path="$.params")},
        )
    logger.error("handler for %s (request id %r) raised", method, request_id, exc_info=exc)
    return ErrorObject(code=INTERNAL_ERROR, message="Internal error")

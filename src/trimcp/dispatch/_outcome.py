"""The one place where an exception raised by a handler becomes a JSON-RPC error.

Policy:

* :class:`~trimcp.dispatch.McpError` (raised on purpose) goes out exactly as raised.
* a cattrs structuring failure is ``-32602 Invalid params`` with the JSON paths of the
  offending members as ``data`` (never Python exception text).
* anything else is ``-32603 Internal error`` with a generic message. The exception,
  with its traceback, is logged here through :mod:`logging` and never reaches the wire,
  because exception text routinely carries secrets, paths and internals.
"""

from __future__ import annotations

import logging

from cattrs.errors import BaseValidationError

from trimcp.binding import format_errors
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS, ErrorObject, RequestId

from ._errors import McpError

__all__ = ["error_for_exception"]

logger = logging.getLogger("trimcp.dispatch")


def error_for_exception(exc: BaseException, *, method: str, request_id: RequestId) -> ErrorObject:
    """Return the error object that answers a request whose handler raised ``exc``."""
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

"""Error masking: errors raised on purpose go out without their details.

trimcp already answers an unexpected exception with a generic ``-32603 Internal
error`` (the exception is logged, never sent). What a handler raises on purpose (an
:class:`~trimcp.McpError` with a database message in it, say) goes out as raised. This
middleware, on a server's send stack, replaces the message and ``data`` of every error
answer whose code is not in ``keep`` (by default the protocol's own codes, which
clients act on) with a generic message and a reference, and logs the original with the
same reference at ``WARNING``, so an operator can find it. With ``tool_errors``, tool
results with ``isError`` are masked the same way.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Collection
from typing import Any, Final, final

from trimcp.dispatch import CallNext
from trimcp.nursery import Session
from trimcp.wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    RESOURCE_NOT_FOUND,
    ErrorObject,
    ErrorResponse,
    Message,
    Request,
    Response,
)

from ._base import DEFAULT_MAX_TRACKED, Requests, RoleMiddleware

__all__ = ["PROTOCOL_CODES", "ErrorMasking"]

#: The codes a client acts on, passed through unchanged by default.
PROTOCOL_CODES: Final = frozenset(
    {
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        REQUEST_TIMEOUT,
        RESOURCE_NOT_FOUND,
        -32000,  # rate limited (trimcp.middleware.RateLimit), connection closed
        -32020,  # header mismatch
        -32021,  # missing client capability
        -32022,  # unsupported protocol version
        -32042,  # URL elicitation required
    }
)


@final
class ErrorMasking(RoleMiddleware):
    """Masks error answers (and optionally tool errors); see the module doc.

    Args:
      message: what a masked error says (default ``"Request failed"``).
      keep: codes passed through unchanged (default :data:`PROTOCOL_CODES`).
      tool_errors: also mask ``tools/call`` results with ``isError``.
      logger: where the originals are logged (``trimcp.middleware.masking``).
    """

    def __init__(
        self,
        message: str = "Request failed",
        *,
        keep: Collection[int] = PROTOCOL_CODES,
        tool_errors: bool = False,
        logger: logging.Logger | None = None,
        max_tracked: int = DEFAULT_MAX_TRACKED,
    ) -> None:
        self.message = message
        self.keep = frozenset(keep)
        self.tool_errors = tool_errors
        self.logger = logger or logging.getLogger("trimcp.middleware.masking")
        self._methods: Requests[str] = Requests(max_tracked)
        #: Answers masked so far.
        self.masked = 0

    async def received(self, session: Session, message: Message, call_next: CallNext) -> None:
        if isinstance(message, Request):
            self._methods.note(session, message.id, message.method)
        await call_next(message)

    async def sending(self, session: Session, message: Message, call_next: CallNext) -> None:
        if isinstance(message, ErrorResponse | Response):
            method = self._methods.pop(session, message.id)
            if isinstance(message, ErrorResponse) and message.error.code not in self.keep:
                message = self._mask_error(message, method)
            elif (
                isinstance(message, Response)
                and self.tool_errors
                and method == "tools/call"
                and message.result.get("isError") is True
            ):
                message = self._mask_tool_error(message)
        await call_next(message)

    def _reference(self, what: str, method: str | None, request_id: Any, detail: Any) -> str:
        reference = secrets.token_hex(6)
        self.masked += 1
        self.logger.warning(
            "masked %s of %s #%s (reference %s): %s", what, method, request_id, reference, detail
        )
        return reference

    def _mask_error(self, message: ErrorResponse, method: str | None) -> ErrorResponse:
        error = message.error
        reference = self._reference("error", method, message.id, f"{error.code} {error.message}")
        masked = ErrorObject(code=error.code, message=self.message, data={"reference": reference})
        return ErrorResponse(id=message.id, error=masked)

    def _mask_tool_error(self, message: Response) -> Response:
        reference = self._reference("tool error", "tools/call", message.id, message.result)
        text = f"{self.message} (reference {reference})"
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        for kept in ("resultType", "_meta"):
            if kept in message.result:
                result[kept] = message.result[kept]
        return Response(id=message.id, result=result)

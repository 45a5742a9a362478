"""Structured request logging: one log record per request, in both directions.

Each record's message reads ``inbound tools/call search #7 ok 12.3 ms``, and its
``extra`` carries the same as fields (``mcp_direction``, ``mcp_method``,
``mcp_target``, ``mcp_request_id``, ``mcp_outcome``, ``mcp_error_code``,
``duration_ms``) for JSON formatters and log pipelines. Params and results are never
logged: they may hold anything the user typed, or secrets.
"""

from __future__ import annotations

import logging
from typing import final

from ._base import DEFAULT_MAX_TRACKED
from ._timing import Completed, RequestWatcher

__all__ = ["RequestLogging"]


@final
class RequestLogging(RequestWatcher):
    """Log each finished request (see the module doc).

    Args:
      logger: where records go (default ``logging.getLogger("trimcp.requests")``).
      level: the level of successful requests (default ``INFO``).
      error_level: the level of errors, tool errors and cancellations (``WARNING``).
    """

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        error_level: int = logging.WARNING,
        max_tracked: int = DEFAULT_MAX_TRACKED,
    ) -> None:
        super().__init__(max_tracked=max_tracked)
        self.logger = logger or logging.getLogger("trimcp.requests")
        self.level = level
        self.error_level = error_level

    def completed(self, record: Completed) -> None:
        level = self.level if record.outcome == "ok" else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        milliseconds = record.seconds * 1000
        outcome: str = record.outcome
        if record.error_code is not None:
            outcome = f"error {record.error_code}"
        target = f" {record.target}" if record.target is not None else ""
        self.logger.log(
            level,
            "%s %s%s #%s %s %.1f ms",
            record.direction,
            record.method,
            target,
            record.request_id,
            outcome,
            milliseconds,
            extra={
                "mcp_direction": record.direction,
                "mcp_method": record.method,
                "mcp_target": record.target,
                "mcp_request_id": record.request_id,
                "mcp_outcome": record.outcome,
                "mcp_error_code": record.error_code,
                "duration_ms": milliseconds,
            },
        )

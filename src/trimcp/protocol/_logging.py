"""Logging: the RFC 5424 severity levels and ``notifications/message``."""

from __future__ import annotations

import enum
import logging
from typing import Any, final

import attrs

__all__ = ["LoggingLevel", "LoggingMessageParams", "SetLevelParams"]


@final
class LoggingLevel(enum.Enum):
    """The eight syslog severities, ordered by severity: ``DEBUG < INFO < ... < EMERGENCY``.

    A plain :class:`~enum.Enum` (not a ``str`` enum), so comparisons mean severity, never
    alphabetical order. The wire value is the lower-case name.
    """

    DEBUG = "debug"
    INFO = "info"
    NOTICE = "notice"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"
    ALERT = "alert"
    EMERGENCY = "emergency"

    @property
    def severity(self) -> int:
        """0 for ``DEBUG`` up to 7 for ``EMERGENCY``."""
        return _SEVERITY[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, LoggingLevel):
            return NotImplemented
        return _SEVERITY[self] < _SEVERITY[other]

    def __le__(self, other: object) -> bool:
        if not isinstance(other, LoggingLevel):
            return NotImplemented
        return _SEVERITY[self] <= _SEVERITY[other]

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, LoggingLevel):
            return NotImplemented
        return _SEVERITY[self] > _SEVERITY[other]

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, LoggingLevel):
            return NotImplemented
        return _SEVERITY[self] >= _SEVERITY[other]

    @classmethod
    def from_python(cls, levelno: int) -> LoggingLevel:
        """Map a :mod:`logging` level number to the nearest MCP level at or below it."""
        if levelno >= logging.CRITICAL:
            return cls.CRITICAL
        if levelno >= logging.ERROR:
            return cls.ERROR
        if levelno >= logging.WARNING:
            return cls.WARNING
        if levelno >= logging.INFO:
            return cls.INFO
        return cls.DEBUG


_SEVERITY: dict[LoggingLevel, int] = {level: i for i, level in enumerate(LoggingLevel)}


@final
@attrs.frozen(kw_only=True)
class SetLevelParams:
    """``logging/setLevel`` (handshake era): send messages at *level* and above."""

    level: LoggingLevel
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class LoggingMessageParams:
    """``notifications/message``. ``data`` is any JSON value (``None`` is sent as null)."""

    level: LoggingLevel
    data: Any
    logger: str | None = None
    meta: dict[str, Any] | None = None

"""Params of the progress and cancellation notifications."""

from __future__ import annotations

from typing import Any, final

import attrs

__all__ = ["CancelledNotificationParams", "ProgressNotificationParams"]


@final
@attrs.frozen(kw_only=True)
class ProgressNotificationParams:
    """``notifications/progress``: ``progress`` must increase with every notification.

    ``message`` is 2025-03-26+.
    """

    progress_token: str | int
    progress: float
    total: float | None = None
    message: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class CancelledNotificationParams:
    """``notifications/cancelled``.

    ``request_id`` is required by every revision except 2025-11-25 (where task cancellation
    omits it); it is optional here so that revision's messages can be read.
    """

    request_id: str | int | None = None
    reason: str | None = None
    meta: dict[str, Any] | None = None

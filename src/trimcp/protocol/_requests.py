"""Parameter shapes shared by several requests."""

from __future__ import annotations

from typing import Any, final

import attrs

__all__ = ["PaginatedParams", "TaskMetadata"]


@final
@attrs.frozen(kw_only=True)
class PaginatedParams:
    """Params of the paginated list requests (``tools/list`` ...); ``cursor`` is opaque."""

    cursor: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class TaskMetadata:
    """``params.task`` (2025-11-25 core tasks): ask for task-augmented execution.

    ``ttl`` is the requested retention in milliseconds.
    """

    ttl: int | None = None

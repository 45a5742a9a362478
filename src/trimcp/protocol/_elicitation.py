"""Elicitation: ``elicitation/create``, a server asking the user for input (2025-06-18+)."""

from __future__ import annotations

from typing import Any, Literal, final

import attrs

from ._requests import TaskMetadata

__all__ = [
    "ElicitParams",
    "ElicitRequestParams",
    "ElicitResult",
    "ElicitUrlParams",
    "ElicitationCompleteParams",
]


@final
@attrs.frozen(kw_only=True)
class ElicitParams:
    """Form-mode elicitation. A missing ``mode`` means form (``"form"`` is 2025-11-25+).

    ``requested_schema`` is a flat object schema: ``{"type": "object", "properties":
    {name: primitive schema}, "required": [...]}``. Never ask for secrets in form mode.
    """

    message: str
    requested_schema: dict[str, Any]
    mode: Literal["form"] | None = None
    task: TaskMetadata | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ElicitUrlParams:
    """URL-mode elicitation (2025-11-25+): send the user to ``url`` out of band.

    ``elicitation_id`` is required in 2025-11-25 and absent from the stateless era.
    """

    mode: Literal["url"] = attrs.field(default="url", init=False)
    message: str
    url: str
    elicitation_id: str | None = None
    task: TaskMetadata | None = None
    meta: dict[str, Any] | None = None


ElicitRequestParams = ElicitUrlParams | ElicitParams
"""Either mode; a ``mode`` of ``"url"`` selects URL mode, anything else is form mode."""


@final
@attrs.frozen(kw_only=True)
class ElicitResult:
    """The user's answer. ``content`` is present only for an accepted form; its values
    are strings, numbers, booleans or (2025-11-25+) lists of strings."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ElicitationCompleteParams:
    """``notifications/elicitation/complete`` (2025-11-25 only)."""

    elicitation_id: str

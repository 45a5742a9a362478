"""Completion: ``completion/complete``, argument suggestions for prompts and templates.

The method exists since 2024-11-05; the ``completions`` capability that announces it is
2025-03-26+, and ``context.arguments`` (values already chosen for the other arguments)
2025-06-18+. ``ref/resource`` names a resource template by its URI template (called
``ResourceReference`` before 2025-06-18, same shape).
"""

from __future__ import annotations

from typing import Any, Literal, final

import attrs

__all__ = [
    "MAX_COMPLETION_VALUES",
    "CompleteParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "PromptReference",
    "ResourceTemplateReference",
]

#: The spec's bound on ``completion.values``.
MAX_COMPLETION_VALUES = 100


@final
@attrs.frozen(kw_only=True)
class PromptReference:
    """Identifies a prompt (``ref/prompt``)."""

    type: Literal["ref/prompt"] = attrs.field(default="ref/prompt", init=False)
    name: str
    title: str | None = None


@final
@attrs.frozen(kw_only=True)
class ResourceTemplateReference:
    """Identifies a resource template by its URI template (``ref/resource``)."""

    type: Literal["ref/resource"] = attrs.field(default="ref/resource", init=False)
    uri: str


CompletionReference = PromptReference | ResourceTemplateReference
"""What a completion request completes an argument of, discriminated by ``type``."""


@final
@attrs.frozen(kw_only=True)
class CompletionArgument:
    """The argument being completed and its partial value."""

    name: str
    value: str


@final
@attrs.frozen(kw_only=True)
class CompletionContext:
    """Values already resolved for the other arguments (2025-06-18+)."""

    arguments: dict[str, str] | None = None


@final
@attrs.frozen(kw_only=True)
class CompleteParams:
    """``completion/complete`` params."""

    ref: PromptReference | ResourceTemplateReference
    argument: CompletionArgument
    context: CompletionContext | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class Completion:
    """Suggested values (at most 100), and optionally how many exist in all."""

    values: list[str]
    total: int | None = None
    has_more: bool | None = None


@final
@attrs.frozen(kw_only=True)
class CompleteResult:
    """The result of ``completion/complete``."""

    completion: Completion
    meta: dict[str, Any] | None = None

"""Prompts: their description (``prompts/list``) and rendering (``prompts/get``).

Prompt arguments are strings on the wire (``GetPromptParams.arguments`` is a string map),
and each :class:`PromptMessage` carries exactly one content block, not a list.
"""

from __future__ import annotations

from typing import Any, final

import attrs

from ._common import Role
from ._content import ContentBlock
from ._metadata import Icon

__all__ = [
    "GetPromptParams",
    "GetPromptResult",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


@final
@attrs.frozen(kw_only=True)
class PromptArgument:
    """One argument a prompt accepts; ``title`` is 2025-06-18+."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None


@final
@attrs.frozen(kw_only=True)
class Prompt:
    """A prompt or prompt template as listed by ``prompts/list``.

    ``title`` is 2025-06-18+, ``icons`` 2025-11-25+, ``meta`` 2025-06-18+.
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class PromptMessage:
    """One message of a rendered prompt: a role and a single content block."""

    role: Role
    content: ContentBlock


@final
@attrs.frozen(kw_only=True)
class ListPromptsResult:
    """One page of prompts; a missing ``next_cursor`` is the end."""

    prompts: list[Prompt]
    next_cursor: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class GetPromptParams:
    """``prompts/get`` params: the prompt's name and its string arguments."""

    name: str
    arguments: dict[str, str] | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class GetPromptResult:
    """A rendered prompt."""

    messages: list[PromptMessage]
    description: str | None = None
    meta: dict[str, Any] | None = None

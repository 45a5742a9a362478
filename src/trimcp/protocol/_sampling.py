"""Sampling: ``sampling/createMessage``, a server asking the client's LLM for a message.

Deprecated in the stateless era (delivered only through MRTR there). Tool use inside
sampling (``tools``, ``tool_choice``, ``tool_use`` / ``tool_result`` blocks) is 2025-11-25+,
as is a list of blocks as a message's ``content``.
"""

from __future__ import annotations

from typing import Any, Literal, final

import attrs

from ._common import Role
from ._content import AudioContent, ContentBlock, ImageContent, TextContent
from ._requests import TaskMetadata
from ._tools import Tool

__all__ = [
    "CreateMessageParams",
    "CreateMessageResult",
    "ModelHint",
    "ModelPreferences",
    "SamplingContent",
    "SamplingMessage",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
]


@final
@attrs.frozen(kw_only=True)
class ToolUseContent:
    """The model asks to call a tool (2025-11-25+)."""

    type: Literal["tool_use"] = attrs.field(default="tool_use", init=False)
    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ToolResultContent:
    """The result of a ``tool_use``, matched by ``tool_use_id`` (2025-11-25+)."""

    type: Literal["tool_result"] = attrs.field(default="tool_result", init=False)
    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = None


SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
"""A block of a sampling message, discriminated by ``type``."""


@final
@attrs.frozen(kw_only=True)
class SamplingMessage:
    """One message of a sampling conversation; ``content`` is one block or a list of them."""

    role: Role
    content: SamplingContent | list[SamplingContent]
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ModelHint:
    """A model name hint, matched as a substring; the client may map it to other models."""

    name: str | None = None


@final
@attrs.frozen(kw_only=True)
class ModelPreferences:
    """Advisory model selection preferences; hints first, priorities in [0, 1]."""

    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


@final
@attrs.frozen(kw_only=True)
class ToolChoice:
    """How the model may use the offered tools (default ``auto``)."""

    mode: Literal["auto", "required", "none"] | None = None


@final
@attrs.frozen(kw_only=True)
class CreateMessageParams:
    """``sampling/createMessage`` params. ``max_tokens`` is the only required knob."""

    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: Literal["none", "thisServer", "allServers"] | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    task: TaskMetadata | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class CreateMessageResult:
    """The sampled message. ``stop_reason`` is open: ``endTurn``, ``stopSequence``,
    ``maxTokens``, ``toolUse`` or anything provider-specific."""

    role: Role
    content: SamplingContent | list[SamplingContent]
    model: str
    stop_reason: str | None = None
    meta: dict[str, Any] | None = None

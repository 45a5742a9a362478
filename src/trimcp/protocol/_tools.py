"""Tools: their description (``tools/list``) and invocation (``tools/call``)."""

from __future__ import annotations

from typing import Any, Literal, final

import attrs

from ._content import ContentBlock
from ._metadata import Icon
from ._requests import TaskMetadata

__all__ = [
    "CallToolParams",
    "CallToolResult",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


@final
@attrs.frozen(kw_only=True)
class ToolAnnotations:
    """Untrusted hints about a tool's behaviour (2025-03-26+).

    Spec defaults when absent: read-only false, destructive true, idempotent false,
    open-world true. ``None`` means "absent", so the peer applies those defaults.
    """

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@final
@attrs.frozen(kw_only=True)
class ToolExecution:
    """``Tool.execution`` (2025-11-25 only): whether the tool may run as a task."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


@final
@attrs.frozen(kw_only=True)
class Tool:
    """A tool as listed by ``tools/list``.

    ``input_schema`` (and ``output_schema``, 2025-06-18+) are JSON Schema objects; in the
    handshake era both need ``"type": "object"`` at the root.
    """

    name: str
    input_schema: dict[str, Any]
    title: str | None = None
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    execution: ToolExecution | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ListToolsResult:
    """One page of tools; a missing ``next_cursor`` is the end."""

    tools: list[Tool]
    next_cursor: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class CallToolParams:
    """``tools/call`` params.

    ``task`` is 2025-11-25 core tasks; ``input_responses`` / ``request_state`` are the
    stateless era's MRTR retry fields (echo ``request_state`` exactly, never parse it).
    """

    name: str
    arguments: dict[str, Any] | None = None
    task: TaskMetadata | None = None
    input_responses: dict[str, Any] | None = None
    request_state: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class CallToolResult:
    """The result of ``tools/call``.

    ``structured_content`` (2025-06-18+) must be a JSON object in the handshake era and may
    be any JSON value in the stateless era; ``None`` means absent (a JSON ``null`` cannot be
    expressed). Tool failures are results with ``is_error=True``, not JSON-RPC errors;
    ``is_error`` is ``False`` on success, also when the server left it out.
    """

    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None

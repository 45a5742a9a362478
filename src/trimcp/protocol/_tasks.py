"""The tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663): its vocabulary.

A server that negotiated the extension on a request may answer a ``tools/call`` with a
``CreateTaskResult`` (``resultType: "task"``, a flat :class:`Task`) instead of the tool's
result; the client then follows the task with ``tasks/get`` (a :class:`DetailedTask`),
answers its input requests with ``tasks/update`` and may stop it with ``tasks/cancel``.

Negotiation is per request and stateless-era only: the client lists the extension under
``extensions`` in its per-request ``clientCapabilities``; under 2025-11-25 the extension
enables nothing, and the 2025-11-25 core ``tasks`` capability does not declare it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, final

import attrs

__all__ = [
    "TASKS_EXTENSION",
    "TASK_METHODS",
    "TASK_RESULT_TYPE",
    "TERMINAL_STATUSES",
    "DetailedTask",
    "Task",
    "TaskStatus",
    "TaskSupport",
    "declares_tasks",
    "tasks_required_by",
    "tasks_required_data",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier (under ``capabilities.extensions``)."""

#: ``MissingRequiredClientCapability`` (the stateless era's ``-32021``).
MISSING_CAPABILITY: Final = -32021

TASK_RESULT_TYPE: Final = "task"
"""The ``resultType`` of a ``CreateTaskResult``, and of nothing else."""

TASK_METHODS: Final = ("tasks/get", "tasks/update", "tasks/cancel")
"""The extension's requests (``tasks/result`` and ``tasks/list`` do not exist in it)."""

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TaskSupport = Literal["forbidden", "optional", "required"]

TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
"""Statuses a task never leaves."""


@attrs.frozen(kw_only=True)
class Task:
    """A task as ``CreateTaskResult`` carries it.

    ``ttl_ms`` is the lifetime from creation (``None``: unlimited) and
    ``poll_interval_ms`` the polling pace the server asks for; both may change while the
    task lives.
    """

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | None = None
    poll_interval_ms: int | None = None

    @property
    def terminal(self) -> bool:
        """Whether the task reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in TERMINAL_STATUSES


@final
@attrs.frozen(kw_only=True)
class DetailedTask(Task):
    """A task as ``tasks/get`` and ``notifications/tasks`` carry it.

    ``input_requests`` (``input_required``): every outstanding request, by key;
    ``result`` (``completed``): what the original request returned;
    ``error`` (``failed``): the JSON-RPC error it failed with.
    """

    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


def declares_tasks(capabilities: Mapping[str, Any] | None) -> bool:
    """Whether raw per-request ``clientCapabilities`` declare the extension."""
    if not isinstance(capabilities, Mapping):
        return False
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(TASKS_EXTENSION), Mapping)


def tasks_required_by(error: object) -> bool:
    """Whether ``error`` (an ``McpError``) is the ``-32021`` naming this extension as the
    missing capability: the call needs a client that declares it."""
    data = getattr(error, "data", None)
    required = data.get("requiredCapabilities") if isinstance(data, Mapping) else None
    return getattr(error, "code", None) == MISSING_CAPABILITY and declares_tasks(required)


def tasks_required_data() -> dict[str, Any]:
    """``data`` of the ``-32021`` error naming the extension as the missing capability."""
    return {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}

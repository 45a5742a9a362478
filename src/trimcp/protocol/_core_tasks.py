"""2025-11-25 core tasks (SEP-1686, ``basic/utilities/tasks``): their vocabulary.

A handshake-era session whose server declared ``tasks.requests.tools.call`` may call a
tool *as a task*: ``tools/call`` with ``params.task`` (a :class:`TaskMetadata`) is
answered at once with a ``CreateTaskResult`` (``{"task": Task}``); the client follows
the task with ``tasks/get``, fetches its outcome with ``tasks/result`` (which blocks
until the task ends, and carries the task's own requests to the client meanwhile), lists
tasks with ``tasks/list`` and stops one with ``tasks/cancel``. The server may push
``notifications/tasks/status``.

These are not the stateless-era tasks extension (:mod:`._tasks`): the shapes differ
(``ttl``/``pollInterval`` here, ``ttlMs``/``pollIntervalMs`` there; the result comes
from ``tasks/result`` here, inside ``tasks/get`` there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

import attrs

from ._tasks import TERMINAL_STATUSES, TaskStatus

__all__ = [
    "CORE_TASK_METHODS",
    "RELATED_TASK_META",
    "TASK_STATUS_NOTIFICATION",
    "CoreTask",
    "ListTasksResult",
    "core_tasks_capability",
    "declares_tool_tasks",
    "related_task_meta",
]

RELATED_TASK_META: Final = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key tying a request, notification or result to its task."""

TASK_STATUS_NOTIFICATION: Final = "notifications/tasks/status"

CORE_TASK_METHODS: Final = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")


@final
@attrs.frozen(kw_only=True)
class CoreTask:
    """A 2025-11-25 ``Task``: what ``CreateTaskResult``, ``tasks/get``, ``tasks/cancel``,
    ``tasks/list`` and ``notifications/tasks/status`` carry.

    ``ttl`` is the retention from creation in milliseconds (``None``: unlimited);
    ``poll_interval`` the polling pace in milliseconds the server suggests.
    """

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None

    @property
    def terminal(self) -> bool:
        """Whether the task reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in TERMINAL_STATUSES


@final
@attrs.frozen(kw_only=True)
class ListTasksResult:
    """One page of ``tasks/list``; a missing ``next_cursor`` is the end."""

    tasks: list[CoreTask]
    next_cursor: str | None = None
    meta: dict[str, Any] | None = None


def core_tasks_capability() -> dict[str, Any]:
    """The server's ``tasks`` capability: list, cancel and task-augmented ``tools/call``."""
    return {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def declares_tool_tasks(tasks: Mapping[str, Any] | None) -> bool:
    """Whether a server's ``tasks`` capability allows task-augmented ``tools/call``."""
    # Asked on every call: no capability (the common case) is answered without the
    # Mapping ABC's instance check.
    if tasks is None or not isinstance(tasks, Mapping):
        return False
    requests = tasks.get("requests")
    tools = requests.get("tools") if isinstance(requests, Mapping) else None
    return isinstance(tools, Mapping) and isinstance(tools.get("call"), Mapping)


def related_task_meta(task_id: str, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``meta`` (or a fresh ``_meta``) with the related-task key naming ``task_id``."""
    return {**(meta or {}), RELATED_TASK_META: {"taskId": task_id}}

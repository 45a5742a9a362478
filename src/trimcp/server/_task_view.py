r"""What a task lookup answers with, wherever the task runs (:mod:`._task_store`).

A task of this process is a :class:`~._task_store.TaskRecord`; with a shared store, a
task running on another process is read from its mirror (:mod:`._shared_tasks`). Both
are :class:`TaskView`\ s, so one visibility check and one set of answers serve both.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Protocol

from trimcp.nursery import HandlerContext, Session

if TYPE_CHECKING:
    from ._task_store import TaskRecord

__all__ = ["TaskKind", "TaskMirror", "TaskView", "same_owner", "session_id_of"]

TaskKind = str
"""``"extension"`` (stateless era, SEP-2663) or ``"core"`` (2025-11-25)."""


def session_id_of(ctx: HandlerContext) -> str | None:
    """The id of ``ctx``'s session where its transport has one (Streamable HTTP)."""
    session_id = getattr(ctx.session_object.channel, "session_id", None)
    return session_id if isinstance(session_id, str) else None


class TaskView(Protocol):
    """What every lookup answers with: a task of this process (:class:`TaskRecord`) or
    the mirror of one running on another process."""

    task_id: str
    kind: TaskKind
    owner: Hashable | None
    session: Session | None
    session_id: str | None
    status: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    pending: dict[str, dict[str, Any]]
    claimed: set[str]

    @property
    def terminal(self) -> bool: ...

    def task(self) -> dict[str, Any]: ...

    def core_task(self) -> dict[str, Any]: ...

    def detailed(self) -> dict[str, Any]: ...


class TaskMirror(Protocol):
    """Where a shared store keeps the records of every process (:mod:`._shared_tasks`)."""

    def changed(self, record: TaskRecord) -> None: ...

    async def publish(self, record: TaskRecord) -> None: ...

    async def load(self, task_id: str) -> TaskView | None: ...

    async def listed(self, scope: str) -> list[TaskView]: ...


def same_owner(recorded: Hashable | None, asking: Hashable | None) -> bool:
    """Owners compare as themselves; one read back from a shared store is text."""
    if recorded == asking:
        return True
    return isinstance(recorded, str) and asking is not None and recorded == str(asking)

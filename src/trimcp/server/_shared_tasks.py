"""Tasks of a shared store: visible and cancellable from every process.

A task's work runs where it was created (its serving's task host, as always); its
record stays there and is authoritative. Around it (:class:`SharedTasks`):

* the record is **mirrored** in the store as it changes (``<p>t:<id>``, living as long
  as the task: its TTL), and at once on creation, before its id is answered; core
  tasks are listed under their principal or session for ``tasks/list``;
* a process asked about a task it does not run reads the mirror (a
  :class:`RemoteTask`; the same visibility check applies). A task whose process has
  lost its lease reads as ``failed`` ("the server process ... stopped");
* what is asked of a remote task is **relayed** to its process: ``tasks/cancel``, the
  answers of ``tasks/update``, and for a 2025-11-25 ``tasks/result`` served elsewhere,
  the input requests it carries (claimed, answered or given back), so that the body
  waiting in ``ctx.elicit`` gets its answer wherever the client asked;
* every change is announced to every process (``tch``), which wakes a
  ``tasks/result`` waiting on another process; it also re-reads the mirror every
  poll interval, so a missed notice costs at most that.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Hashable
from contextlib import suppress
from functools import partial
from typing import Any, Final, final

import trio

from trimcp.dispatch import ConnectionClosedError, McpError
from trimcp.nursery import HandlerContext, Session
from trimcp.protocol import related_task_meta
from trimcp.store import SharedStore
from trimcp.transports.http import Envelope, StoreUnavailable
from trimcp.wire import INTERNAL_ERROR, INVALID_PARAMS, NO_DATA

from ._mrtr import check_response
from ._task_store import TaskRecord, TaskStore, TaskView

__all__ = ["RemoteTask", "SharedTasks"]

logger = logging.getLogger("trimcp.server.tasks")

#: The status message of a task whose process stopped.
STOPPED: Final = "The server process running this task stopped."
#: How long a mirror lives when its task has no TTL (24 h).
_NO_TTL_MS: Final = 24 * 3600 * 1000


def _unavailable() -> McpError:
    return McpError(INTERNAL_ERROR, "Internal error: the task store cannot be reached")


@final
class RemoteTask:
    """The mirror of a task running on another process (read only; module doc)."""

    session: Session | None = None

    def __init__(self, doc: dict[str, Any], home_alive: bool) -> None:
        self.task_id: str = doc["id"]
        self.kind: str = doc["kind"]
        self.owner: Hashable | None = doc.get("owner")
        self.session_id: str | None = doc.get("session")
        self.home: int = doc["home"]
        self.poll = max(doc["core"].get("pollInterval") or 500, 50) / 1000
        self._task: dict[str, Any] = doc["task"]
        self._core: dict[str, Any] = doc["core"]
        self._detailed: dict[str, Any] = doc["detailed"]
        self.status: str = self._task["status"]
        self.result: dict[str, Any] | None = doc.get("result")
        self.error: dict[str, Any] | None = doc.get("error")
        self.pending: dict[str, dict[str, Any]] = doc.get("pending") or {}
        self.claimed: set[str] = set(doc.get("claimed") or ())
        if not home_alive and not self.terminal:
            self._as("failed", STOPPED)
            self.error = {"code": INTERNAL_ERROR, "message": STOPPED}
            self.pending = {}
            self._detailed = {**self._task, "error": self.error}

    def _as(self, status: str, message: str) -> None:
        self.status = status
        for view in (self._task, self._core, self._detailed):
            view["status"] = status
            view["statusMessage"] = message

    @property
    def terminal(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    def cancelled_view(self) -> dict[str, Any]:
        """The 2025-11-25 task as ``tasks/cancel`` leaves it (its process, told, makes it
        so on record)."""
        self._as("cancelled", "The task was cancelled.")
        return self.core_task()

    def task(self) -> dict[str, Any]:
        return dict(self._task)

    def core_task(self) -> dict[str, Any]:
        return dict(self._core)

    def detailed(self) -> dict[str, Any]:
        return dict(self._detailed)


def _doc(record: TaskRecord, process: int) -> dict[str, Any]:
    owner = record.owner
    return {
        "id": record.task_id,
        "kind": record.kind,
        "owner": None if owner is None else str(owner),
        "session": record.session_id,
        "home": process,
        "task": record.task(),
        "core": record.core_task(),
        "detailed": record.detailed(),
        "result": record.result,
        "error": record.error,
        "pending": record.pending,
        "claimed": sorted(record.claimed),
    }


@final
class SharedTasks:
    """The task mirror of one server in a shared store (module doc)."""

    def __init__(self, store: SharedStore, tasks: TaskStore) -> None:
        self.store = store
        self.tasks = tasks
        self._waiters: dict[str, trio.Event] = {}
        tasks.mirror = self
        store.on_envelope(self._envelope)

    # ------------------------------------------------------------------ the home's side
    def _ttl_ms(self, record: TaskRecord) -> int:
        if record.deadline == float("inf"):
            return _NO_TTL_MS
        return max(1, round((record.deadline - trio.current_time()) * 1000))

    def _index(self, record: TaskRecord) -> str | None:
        if record.kind != "core":
            return None
        return f"o:{record.owner}" if record.owner is not None else f"s:{record.session_id}"

    async def _write(self, record: TaskRecord) -> None:
        doc = json.dumps(_doc(record, self.store.process)).encode()
        await self.store.save_task(record.task_id, doc, self._ttl_ms(record), self._index(record))

    def changed(self, record: TaskRecord) -> None:
        """Mirror ``record`` (in the background: a change is never held up by it)."""
        if self.store.running:
            self.store.later(partial(self._write, record))

    async def publish(self, record: TaskRecord) -> None:
        try:
            await self._write(record)
        except StoreUnavailable:
            raise _unavailable() from None

    def _envelope(self, envelope: Envelope) -> None:
        if envelope.kind == "tch":
            event = self._waiters.pop(envelope.stream, None)
            if event is not None:
                event.set()
            return
        if envelope.kind != "task":
            return
        record = self.tasks.local(envelope.stream)
        try:
            order = json.loads(envelope.payload)
        except ValueError:
            return
        if record is None or not isinstance(order, dict):
            return
        self._apply(record, order)

    def _apply(self, record: TaskRecord, order: dict[str, Any]) -> None:
        """What another process asked of a task running here."""
        op = order.get("op")
        key = order.get("key")
        if op == "cancel" and not record.terminal:
            if order.get("core"):
                record.cancelled()
            record.scope.cancel()
        elif op == "answer" and isinstance(order.get("responses"), dict):
            try:
                record.answer(order["responses"])
            except McpError as exc:
                logger.info("task %s: a relayed answer was refused: %s", record.task_id, exc)
        elif op == "claim" and isinstance(key, str):
            record.claimed.add(key)
            self.changed(record)
        elif op == "release" and isinstance(key, str):
            record.release(key)
            self.changed(record)
        elif op == "reply" and isinstance(key, str):
            error = order.get("error")
            if isinstance(error, dict):
                code = error.get("code")
                failure = McpError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message")),
                    error.get("data", NO_DATA),
                )
                record.reply(key, failure)
            elif isinstance(order.get("result"), dict):
                record.reply(key, order["result"])

    # ------------------------------------------------------------------ the other side
    async def load(self, task_id: str) -> TaskView | None:
        try:
            raw = await self.store.load_task(task_id)
            if raw is None:
                return None
            doc = json.loads(raw)
            alive = True
            if doc["task"]["status"] not in ("completed", "failed", "cancelled"):
                alive = bool(await self.store.alive({doc["home"]}))
        except StoreUnavailable:
            raise _unavailable() from None
        return RemoteTask(doc, alive)

    async def listed(self, scope: str) -> list[TaskView]:
        try:
            docs = [json.loads(raw) for raw in await self.store.task_index(scope)]
            homes = {d["home"] for d in docs}
            alive = await self.store.alive(homes) if homes else set()
        except StoreUnavailable:
            raise _unavailable() from None
        return [RemoteTask(d, d["home"] in alive) for d in docs]

    async def order(self, task: RemoteTask, **order: Any) -> None:
        """Relay ``order`` to the process running ``task``."""
        envelope = Envelope("task", "", task.task_id, payload=json.dumps(order).encode())
        try:
            await self.store.send(envelope, to=task.home)
        except StoreUnavailable:
            raise _unavailable() from None

    async def answer(self, task: RemoteTask, responses: dict[str, Any]) -> None:
        """``tasks/update`` of a remote task: checked here as its process would, then
        relayed (keys not outstanding are ignored)."""
        accepted = {
            key: check_response(task.pending[key]["method"], response)
            for key, response in responses.items()
            if key in task.pending
        }
        if accepted:
            await self.order(task, op="answer", responses=accepted)

    async def result(self, ctx: HandlerContext, task: RemoteTask) -> RemoteTask:
        """A 2025-11-25 ``tasks/result`` of a remote task: carry its input requests to
        this request's client until it ends; the task as it ended."""
        carried: set[str] = set()
        async with trio.open_nursery() as carriers:
            while not task.terminal:
                for key, request in task.pending.items():
                    if key not in carried and key not in task.claimed:
                        carried.add(key)
                        carriers.start_soon(self._carry, ctx, task, key, request)
                event = self._waiters.setdefault(task.task_id, trio.Event())
                with trio.move_on_after(task.poll):
                    await event.wait()
                fresh = await self.load(task.task_id)
                if not isinstance(fresh, RemoteTask):
                    raise McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
                task = fresh
            carriers.cancel_scope.cancel()
        return task

    async def _carry(
        self, ctx: HandlerContext, task: RemoteTask, key: str, request: dict[str, Any]
    ) -> None:
        """Send input request ``key`` to this request's client; its answer goes to the
        task's process. Given back if this request ends first."""
        await self.order(task, op="claim", key=key)
        params = dict(request.get("params") or {})
        params["_meta"] = related_task_meta(task.task_id, params.get("_meta"))
        answered = False
        try:
            try:
                result = await ctx.request(request["method"], params)
                order: dict[str, Any] = {"result": result}
            except McpError as exc:  # the client's error (or none in time) is the answer
                error: dict[str, Any] = {"code": exc.code, "message": exc.message}
                if exc.data is not None and exc.data is not NO_DATA:
                    error["data"] = exc.data
                order = {"error": error}
            except ConnectionClosedError:
                return  # nobody to ask here: given back below
            await self.order(task, op="reply", key=key, **order)
            answered = True
        finally:
            if not answered:
                with trio.CancelScope(shield=True), trio.move_on_after(2), suppress(McpError):
                    await self.order(task, op="release", key=key)

"""The pending-id table: outbound requests waiting for their answer.

Invariant 3 of the design: every outbound request resolves exactly once, to a result, an
error, a cancellation or a connection-closed error, and its entry is gone afterwards.
The table allocates ids (integers, never reused within a session), holds one
:class:`PendingCall` per request in flight, and is bounded: ``max_pending`` callers may
wait at once, further callers block (backpressure) until an entry frees.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, final

import outcome
import trio

from trimcp.wire import ErrorResponse, RequestId, Response

from ._errors import McpError
from ._slots import Slots

__all__ = ["DEFAULT_MAX_PENDING", "PendingCall", "PendingTable", "ProgressCallback"]

logger = logging.getLogger("trimcp.dispatch")

#: Outbound requests one session may have waiting at once before callers block.
DEFAULT_MAX_PENDING = 10_000

ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None]]


@final
class PendingCall:
    """One outbound request waiting for its answer."""

    __slots__ = (
        "_waiter",
        "deadline",
        "done",
        "error",
        "expired",
        "hard_deadline",
        "id",
        "method",
        "on_progress",
        "restart",
        "result",
        "task",
        "timeout_scope",
    )

    def __init__(self, request_id: int, method: str, on_progress: ProgressCallback | None) -> None:
        self.id = request_id
        self.method = method
        self.on_progress = on_progress
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None
        #: The scope that bounds the wait; progress notifications push its deadline.
        self.timeout_scope: trio.CancelScope | None = None
        #: The wait a progress notification restarts: the caller's timeout.
        self.restart = 0.0
        #: Progress never pushes the deadline past this.
        self.hard_deadline = float("inf")
        #: When a call bounded by a deadline timer instead of a scope times out, and
        #: the task that waits for it (see :meth:`expire`).
        self.deadline = float("inf")
        self.task: trio.lowlevel.Task | None = None
        #: The timeout error once the deadline timer expired the call.
        self.expired: McpError | None = None
        #: The answer (or an error) came. Read-only outside this module; an attribute
        #: rather than a property, since every request reads it (a call less).
        self.done = False
        # One waiter, woken directly: a trio.Event would add a parking lot (an ordered
        # dict) to every request in flight.
        self._waiter: trio.lowlevel.Task | None = None

    @property
    def waiting(self) -> bool:
        """A task waits in :meth:`wait` now."""
        return self._waiter is not None

    def _resolve(self, result: dict[str, Any] | None, error: McpError | None) -> bool:
        if self.done:
            return False
        self.result = result
        self.error = error
        self.done = True
        if self._waiter is not None:
            # The waiter wakes with its answer: nothing to read back after the wait.
            trio.lowlevel.reschedule(
                self._waiter, outcome.Value(result) if error is None else outcome.Error(error)
            )
            self._waiter = None
        return True

    def expire(self, error: McpError) -> bool:
        """The call's deadline passed before its answer came: a caller waiting for it
        wakes with ``error`` now, one not waiting yet meets it in :meth:`wait`.
        ``False`` if the answer came first."""
        if self.done or self.expired is not None:
            return False
        self.expired = error
        if self._waiter is not None:
            trio.lowlevel.reschedule(self._waiter, outcome.Error(error))
            self._waiter = None
        return True

    def wait(self) -> Awaitable[dict[str, Any]]:
        """Wait for the answer; return the result or raise the error. One task waits
        (the one that sent the request); a checkpoint either way.

        A plain function returning the awaitable, so a parked request keeps no frame or
        closure of its own here (only the bound ``_abort`` Trio holds). It binds the
        task that *calls* it: await it at once, never pass it to ``start_soon``.
        """
        if self.done:
            return self._answered()
        if self.expired is not None:
            raise self.expired
        if self._waiter is not None:
            raise RuntimeError("another task is already waiting for this answer")
        # The task the deadline timer watches is this one (it was added from it).
        task = self.task
        self._waiter = task if task is not None else trio.lowlevel.current_task()
        # The caller awaits it at once.
        return trio.lowlevel.wait_task_rescheduled(self._abort)  # noqa: ASYNC105

    def _abort(self, _: object) -> trio.lowlevel.Abort:
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED

    async def _answered(self) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@final
class PendingTable:
    """Outbound requests of one session, keyed by id."""

    def __init__(self, *, max_pending: int = DEFAULT_MAX_PENDING, first_id: int = 0) -> None:
        self._calls: dict[RequestId, PendingCall] = {}
        self._next_id = first_id
        #: At most ``max_pending`` calls; a slot freed while callers wait passes
        #: straight to the first of them (see :mod:`._slots`).
        self._slots = Slots(max_pending)
        self._closed: McpError | None = None
        #: Answers that matched no waiter (unknown, duplicate or late): dropped, counted.
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._calls)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._calls

    def get(self, request_id: RequestId) -> PendingCall | None:
        return self._calls.get(request_id)

    async def allocate(
        self, method: str, on_progress: ProgressCallback | None = None
    ) -> PendingCall:
        """Take a slot (waiting while the table is full) and a fresh id."""
        # (The closed checks inline: every request passes here twice.)
        closed = self._closed
        if closed is not None:
            raise _own_copy(closed)
        # No checkpoint when a slot is free: the caller's send that follows is one.
        slots = self._slots
        if slots.free:  # (take_nowait inline: every request passes here)
            slots.free -= 1
        else:
            await slots.wait()  # woken holding the slot its waker freed
        if self._closed is not None:
            slots.release()
            raise _own_copy(self._closed)
        call = PendingCall(self._next_id, method, on_progress)
        self._next_id += 1
        self._calls[call.id] = call
        return call

    def release(self, call: PendingCall) -> None:
        """Forget ``call`` (after it resolved, or when its caller gave up)."""
        if self._calls.pop(call.id, None) is not None:
            self._slots.release()

    def resolve(self, message: Response | ErrorResponse) -> bool:
        """Deliver an answer. Returns ``False`` (and counts it) when nobody waits for it."""
        call = self._calls.get(message.id) if message.id is not None else None
        if call is None:
            self.dropped += 1
            logger.debug("dropped an answer for unknown request id %r", message.id)
            return False
        if isinstance(message, Response):
            ok = call._resolve(message.result, None)
        else:
            ok = call._resolve(None, McpError.from_error(message.error))
        if not ok:
            self.dropped += 1
        return ok

    def fail_all(self, error: McpError) -> None:
        """Fail every waiting call at once with ``error``; later allocations fail too.

        Each caller gets an instance of its own (a copy of ``error``): an exception
        collects the traceback of every task that raises it, so one shared instance
        would grow with each caller and keep all their frames alive.
        """
        self._closed = error
        for call in list(self._calls.values()):
            call._resolve(None, _own_copy(error))


def _own_copy(error: McpError) -> McpError:
    """A fresh ``error`` of the same type and contents, with no traceback or context."""
    fresh = type(error).__new__(type(error), *error.args)
    fresh.__dict__.update(error.__dict__)
    return fresh

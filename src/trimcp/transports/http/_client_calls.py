"""What the Streamable HTTP client channel keeps per POST: the call awaiting its answer,
and the signal that tells ``send`` its message was written."""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import trio

from trimcp.wire import Message, Notification, RequestId

__all__ = ["Breakable", "Call", "GivenUp", "Started", "cancelled_id", "describe"]


@final
class Call:
    """A request whose answer has not arrived; ``scope`` bounds the task reading for it.

    ``session`` is the session id it was last sent with (``None`` once it got a 404).
    """

    __slots__ = ("carried", "scope", "session", "stateless", "written")

    def __init__(self, stateless: bool = False) -> None:
        self.scope = trio.CancelScope()
        self.session: str | None = None
        #: Sent as a stateless-era request (its cancellation is closing its stream).
        self.stateless = stateless
        #: Its stream carried a request of the server's (sampling, elicitation ...).
        self.carried = False
        #: Its POST was written (the server may have the request).
        self.written = False

    def give_up(self, linger: float) -> None:
        """Stop reading the answer: at once, or within ``linger`` seconds when the stream
        carried a request of the server's. The server cancels that request on this
        stream before it ends it, and the handler answering it must hear of it."""
        if self.carried:
            self.scope.deadline = min(self.scope.deadline, trio.current_time() + linger)
        else:
            self.scope.cancel()


class GivenUp(trio.ClosedResourceError):
    """The POST task ended (cancelled) before its message was written."""


@final
class Started:
    """Tells ``send`` that its POST was written (and the call), or why it could not be.

    What ``nursery.start`` does, without the temporary nursery it makes per POST (a
    cancel scope and its sets, ~4 KiB: most of a burst's peak memory, kept alive by
    the task status for as long as the call was parked). Like ``start``, a caller
    cancelled while it waits cancels the POST (``abandon``) and waits for it to stop;
    an error that stopped the POST wins over that cancellation, and a message written
    meanwhile counts as sent (the cancellation arrives at the caller's next checkpoint).
    """

    __slots__ = (
        "_waiter",
        "abandon",
        "abandoned",
        "call",
        "detached",
        "done",
        "error",
        "interrupted",
    )

    def __init__(self, call: Call, *, detached: bool = False) -> None:
        self._waiter: trio.lowlevel.Task | None = None
        self.call = call
        self.abandon: Callable[[], object] = call.scope.cancel
        #: Nobody waits (``send_nowait``): a POST that fails before it is written
        #: fails its call instead.
        self.detached = detached
        self.abandoned = False
        self.done = False
        self.error: BaseException | None = None
        #: Why the caller stopped waiting for the write (its call's deadline), if so.
        self.interrupted: BaseException | None = None

    def interrupt(self, error: BaseException) -> bool:
        """The caller's call timed out while its POST waits to be written (for a pool
        connection, say): give the POST up, and make :meth:`wait` raise ``error`` once
        the POST has stopped. A POST written meanwhile counts as sent (``wait`` returns;
        the caller meets its timeout waiting for the answer). ``False`` when it was
        written already."""
        if self.done:
            return False
        self.interrupted = error
        self.abandoned = True
        self.abandon()
        return True

    def started(self) -> None:
        self.call.written = True
        self._finish(None)

    def failed(self, error: BaseException) -> None:
        self._finish(error)

    def _finish(self, error: BaseException | None) -> None:
        if self.done:
            return
        self.done = True
        self.error = error
        if self._waiter is not None:
            trio.lowlevel.reschedule(self._waiter)
            self._waiter = None

    async def wait(self, task: trio.lowlevel.Task) -> None:
        """Return once written; raise what stopped the POST first. ``task`` is the one
        calling (its caller has it at hand)."""
        if self.done:
            await trio.lowlevel.checkpoint()
        else:
            self._waiter = task

            def abort(_: object) -> trio.lowlevel.Abort:
                # Keep waiting: the POST stops soon and says how it ended.
                self.abandoned = True
                self.abandon()
                return trio.lowlevel.Abort.FAILED

            await trio.lowlevel.wait_task_rescheduled(abort)
        if self.error is not None:
            if self.abandoned and isinstance(self.error, GivenUp):
                if self.interrupted is not None:
                    raise self.interrupted
                await trio.lowlevel.checkpoint()  # the caller's own cancellation
            raise self.error


@final
class Breakable:
    """A wait of ``send`` other than its POST's (the GET stream still opening, a send
    over HTTP+SSE) that a call's deadline may break: :meth:`interrupt` cancels its
    scope, and the send raises the error."""

    __slots__ = ("error", "scope")

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        self.error: BaseException | None = None

    def interrupt(self, error: BaseException) -> bool:
        self.error = error
        self.scope.cancel()
        return True


def cancelled_id(message: Message) -> RequestId | None:
    """The request a ``notifications/cancelled`` names, else ``None``."""
    if not isinstance(message, Notification) or message.method != "notifications/cancelled":
        return None
    request_id = (message.params or {}).get("requestId")
    if isinstance(request_id, str | int) and not isinstance(request_id, bool):
        return request_id
    return None


def describe(message: Message) -> str:
    """How a log line names a message that is not a request."""
    if isinstance(message, Notification):
        return f"notification {message.method}"
    return "response"

"""A Trio run on a background thread, driven step by step from synchronous code.

Hypothesis' ``RuleBasedStateMachine`` calls its rules synchronously, and the Trio plugin
for it no longer works with current Hypothesis. :class:`TrioThread` bridges the two: one
``trio.run`` per example lives in a daemon thread, and each rule hands it one coroutine
with :meth:`TrioThread.call`, which blocks until the coroutine has finished.

Time is a :class:`trio.testing.MockClock` that never moves by itself (rate 0, no
autojump): timeouts fire only when a rule calls :meth:`TrioThread.jump`, so a model can
predict them exactly. A step is still bounded in *wall-clock* time: when it does not
finish within ``limit`` seconds the run is cancelled and the step fails as a hang,
instead of freezing the test suite.

:class:`RawPeer` is the far end of a message channel, driven by hand: every message the
session sends lands in an unbounded buffer the model drains after each step, and
:class:`RecordingChannel` keeps one timeline of what the session sent, into which
handlers can write their own marks (to check orderings such as "the peer was told
before the scope exited").
"""

from __future__ import annotations

import math
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio
import trio.testing
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine

from trimcp.testing._loop import LoopThread
from trimcp.transports import MemoryChannel
from trimcp.wire import Message, RequestId

T = TypeVar("T")

#: Wall-clock seconds one step may take before it is declared hung.
STEP_LIMIT = 20.0

CANCELLED = "notifications/cancelled"

# The machines' settings: cheap by default (CI), longer with TRIMCP_PROPERTY_EXAMPLES=<n>.
_EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "0") or 0)
settings.register_profile(
    "session-machine-ci",
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "session-machine-full",
    max_examples=max(_EXAMPLES, 1),
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
MACHINE_SETTINGS = settings.get_profile(
    "session-machine-full" if _EXAMPLES else "session-machine-ci"
)


class TrioThread(LoopThread):
    """:class:`trimcp.testing._loop.LoopThread` on a clock only :meth:`jump` moves; a step
    is bounded by ``STEP_LIMIT`` unless told otherwise, and :meth:`stop` raises what
    crashed the run."""

    def __init__(self) -> None:
        self.clock = trio.testing.MockClock()
        super().__init__(self.clock, start_limit=STEP_LIMIT)

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any, limit: float = STEP_LIMIT) -> T:
        """Run ``await fn(*args)`` in the Trio thread and return its result (or raise)."""
        return super().call(fn, *args, limit=limit)

    def stop(self, limit: float = STEP_LIMIT) -> None:
        """End the run (cancelling whatever is left), join the thread, raise its crash."""
        super().stop(limit)
        assert not self._thread.is_alive(), "the Trio thread did not stop"
        if self._crash is not None:
            raise self._crash

    def jump(self, seconds: float) -> None:
        """Move virtual time forward (call from within a step, then settle)."""
        self.clock.jump(seconds)


class RecordingChannel:
    """Wraps a channel; appends ``("sent", message)`` to ``timeline`` for every send."""

    def __init__(self, inner: MemoryChannel, timeline: list[tuple[str, Any]]) -> None:
        self.inner = inner
        self.timeline = timeline

    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        self.timeline.append(("sent", message))
        await self.inner.send(message, related=related)

    async def receive(self) -> Message:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def negotiated(self, protocol_version: str) -> None:
        self.inner.negotiated(protocol_version)


class RawPeer:
    """The hand-driven far end of an unbounded memory pair."""

    def __init__(self) -> None:
        self._to_session, session_in = trio.open_memory_channel[Message](math.inf)
        session_out, self._from_session = trio.open_memory_channel[Message](math.inf)
        self.channel = MemoryChannel(session_out, session_in)
        self.closed = False

    def send(self, message: Message) -> None:
        """Queue a message for the session (never blocks: the buffer is unbounded)."""
        self._to_session.send_nowait(message)

    def drain(self) -> list[Message]:
        """Everything the session has sent so far and nobody took yet."""
        out: list[Message] = []
        while True:
            try:
                out.append(self._from_session.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return out

    def eof(self) -> None:
        """Close the direction towards the session: it sees the end of its input."""
        self.closed = True
        self._to_session.close()


async def settle() -> None:
    """Let every task run until all are blocked."""
    await trio.testing.wait_all_tasks_blocked()


class PeerMachine(RuleBasedStateMachine):
    """What both session machines share: a Trio thread, a raw peer and the virtual time
    of the last step. :meth:`step` runs an action and hands what the session sent to
    :meth:`absorb`; teardown hangs up unless the session already ended."""

    def __init__(self) -> None:
        super().__init__()
        self.trio = TrioThread()
        self.peer = RawPeer()
        self.now = 0.0
        self.ended = False

    def absorb(self, messages: list[Message]) -> None:
        """Check and record what the session sent during a step."""
        raise NotImplementedError

    def hang_up(self) -> None:
        """EOF from the peer (a rule of each machine)."""
        raise NotImplementedError

    def step(self, action: Callable[[], object]) -> list[Message]:
        """Run ``action()`` (sync, in the Trio thread), settle, return what was sent."""

        async def run() -> list[Message]:
            action()
            await settle()
            self.now = trio.current_time()
            return self.peer.drain()

        messages = self.trio.call(run)
        self.absorb(messages)
        return messages

    def teardown(self) -> None:
        try:
            if not self.ended:
                self.hang_up()
        finally:
            self.trio.stop()

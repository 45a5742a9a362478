"""A Trio run on a background thread, driven one step at a time from synchronous code.

Hypothesis calls a state machine's rules synchronously; :class:`LoopThread` keeps one
``trio.run`` alive in a daemon thread for the whole example and runs each step's
coroutine in it with :meth:`LoopThread.call`, which blocks until the coroutine is done.
A step that exceeds its wall-clock ``limit`` cancels the run and fails as a hang, so a
server that stops answering cannot freeze the caller.

``clock="mock"`` runs on :class:`trio.testing.MockClock` with ``autojump_threshold=0``:
in-process servers then see time jump whenever every task is blocked, so timeouts cost
nothing. ``"real"`` uses the system clock (needed for child processes and sockets). A
clock object is used as given (a test may move a ``MockClock`` by hand).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio
import trio.testing

__all__ = ["LoopThread", "StepHung"]

T = TypeVar("T")


class StepHung(AssertionError):
    """A step did not finish within its wall-clock limit."""


class LoopThread:
    """One Trio run in a daemon thread; :meth:`call` runs a coroutine function in it."""

    def __init__(self, clock: str | trio.abc.Clock = "real", *, start_limit: float = 30.0) -> None:
        self._clock: trio.abc.Clock | None
        if isinstance(clock, str):
            self._clock = trio.testing.MockClock(autojump_threshold=0) if clock == "mock" else None
        else:
            self._clock = clock
        self._ready = threading.Event()
        self._outstanding: set[concurrent.futures.Future[Any]] = set()
        self._crash: BaseException | None = None
        self.nursery: trio.Nursery
        self._token: trio.lowlevel.TrioToken
        self._stop: trio.Event
        self._thread = threading.Thread(target=self._main, name="trimcp-conform", daemon=True)
        self._thread.start()
        if not self._ready.wait(start_limit):
            raise StepHung("the Trio thread did not start")

    def _main(self) -> None:
        try:
            trio.run(self._root, clock=self._clock)
        except BaseException as exc:
            self._crash = exc
        finally:
            self._ready.set()
            # A step still waited on fails now, not once its limit has passed.
            for future in list(self._outstanding):
                if not future.done():
                    future.set_exception(StepHung(f"the Trio run ended: {self._crash!r}"))

    async def _root(self) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            self._stop = trio.Event()
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any, limit: float) -> T:
        """Run ``await fn(*args)`` in the Trio thread and return its result (or raise)."""
        if self._crash is not None or not self._thread.is_alive():
            raise StepHung(f"the Trio run has ended: {self._crash!r}")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._outstanding.add(future)

        async def step() -> None:
            try:
                value = await fn(*args)
            except BaseException as exc:
                future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                future.set_result(value)

        self._token.run_sync_soon(self.nursery.start_soon, step)
        try:
            return future.result(timeout=limit)
        except concurrent.futures.TimeoutError:
            with contextlib.suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self.nursery.cancel_scope.cancel)
            raise StepHung(f"a step took longer than {limit:g} s") from None
        finally:
            self._outstanding.discard(future)

    def stop(self, limit: float = 30.0) -> None:
        """End the run (cancelling whatever is left) and join the thread."""
        if self._thread.is_alive():
            with contextlib.suppress(trio.RunFinishedError, AttributeError):
                self._token.run_sync_soon(self._stop.set)
            self._thread.join(limit)

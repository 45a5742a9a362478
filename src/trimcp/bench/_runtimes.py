"""The async runtimes implementations run on, behind one small interface.

Load generation (:mod:`._load`) and the metrics are written once against
:class:`Runtime`; Trio runs trimcp and the floor, anyio on asyncio (the SDK's default)
runs the SDK. Both task groups (a Trio nursery, an anyio task group) have
``cancel_scope.cancel()``, which the parked metric uses to cancel its callers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, cast

__all__ = ["Runtime", "TaskGroup", "asyncio_runtime", "trio_runtime"]


class _Scope(Protocol):
    def cancel(self) -> None: ...


class TaskGroup(Protocol):
    @property
    def cancel_scope(self) -> _Scope: ...

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None: ...


@dataclass(frozen=True)
class Runtime:
    """How to run, spawn and sleep on one async library."""

    name: str
    run: Callable[[Callable[[], Awaitable[Any]]], Any]
    open_group: Callable[[], AbstractAsyncContextManager[TaskGroup]]
    sleep: Callable[[float], Awaitable[None]]


def trio_runtime() -> Runtime:
    import trio

    def open_group() -> AbstractAsyncContextManager[TaskGroup]:
        return cast("AbstractAsyncContextManager[TaskGroup]", trio.open_nursery())

    return Runtime("trio", trio.run, open_group, trio.sleep)


def asyncio_runtime() -> Runtime:
    """anyio on its asyncio backend, which is what the SDK uses by default."""
    import anyio

    def run(fn: Callable[[], Awaitable[Any]]) -> Any:
        return anyio.run(fn, backend="asyncio")

    def open_group() -> AbstractAsyncContextManager[TaskGroup]:
        return cast("AbstractAsyncContextManager[TaskGroup]", anyio.create_task_group())

    return Runtime("asyncio", run, open_group, anyio.sleep)

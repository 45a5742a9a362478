"""The async runtimes implementations run on, behind one small interface.

Load generation (:mod:`benchmarks.load`) is written once against :class:`Runtime`; Trio
runs trimcp and the floor, anyio on asyncio (the SDK's default) runs the SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, cast


class TaskGroup(Protocol):
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

    return Runtime("trio", trio.run, trio.open_nursery, trio.sleep)


def asyncio_runtime() -> Runtime:
    """anyio on its asyncio backend, which is what the SDK uses by default."""
    import anyio

    def run(fn: Callable[[], Awaitable[Any]]) -> Any:
        return anyio.run(fn, backend="asyncio")

    def open_group() -> AbstractAsyncContextManager[TaskGroup]:
        return cast("AbstractAsyncContextManager[TaskGroup]", anyio.create_task_group())

    return Runtime("asyncio", run, open_group, anyio.sleep)

"""The pending table's calls: one waiter each, woken by the answer or cancelled."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.dispatch import PendingTable
from trimcp.wire import Response


async def test_the_answer_wakes_its_waiter() -> None:
    table = PendingTable()
    call = await table.allocate("ping")
    got: list[object] = []
    async with trio.open_nursery() as nursery:

        async def wait() -> None:
            got.append(await call.wait())

        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        assert not call.done
        assert got == []
        table.resolve(Response(id=call.id, result={"ok": True}))
    assert call.done
    assert got == [{"ok": True}]
    assert await call.wait() == {"ok": True}  # answered already: returns at once


async def test_a_cancelled_waiter_leaves_the_call_answerable() -> None:
    table = PendingTable()
    call = await table.allocate("ping")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(call.wait)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert not call.done
    table.resolve(Response(id=call.id, result={}))
    assert await call.wait() == {}


async def test_only_one_task_may_wait() -> None:
    table = PendingTable()
    call = await table.allocate("ping")

    async def first() -> None:
        await call.wait()  # wait() binds the task that calls it

    async with trio.open_nursery() as nursery:
        nursery.start_soon(first)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(RuntimeError, match="already waiting"):
            await call.wait()
        table.resolve(Response(id=call.id, result={}))

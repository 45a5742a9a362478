"""The pending table's calls: one waiter each, woken by the answer or cancelled."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.dispatch import ConnectionClosedError, McpError, PendingCall, PendingTable
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


async def test_each_caller_gets_an_error_of_its_own_when_the_table_fails() -> None:
    """One shared instance would collect every caller's traceback and keep their frames."""
    table = PendingTable()
    calls = [await table.allocate("ping") for _ in range(3)]
    raised: list[BaseException] = []

    async def wait(call: PendingCall) -> None:
        try:
            await call.wait()
        except McpError as exc:
            raised.append(exc)

    reason = McpError(-32000, "the session ended", {"why": "test"})
    async with trio.open_nursery() as nursery:
        for call in calls:
            nursery.start_soon(wait, call)
        await trio.testing.wait_all_tasks_blocked()
        table.fail_all(reason)
    with pytest.raises(McpError) as later:
        await table.allocate("ping")
    raised.append(later.value)
    assert len({id(exc) for exc in raised}) == 4
    assert all(exc is not reason for exc in raised)
    for exc in raised:
        assert type(exc) is McpError
        assert (exc.code, exc.message, exc.data) == (reason.code, reason.message, reason.data)
        assert exc.__context__ is None
    # each traceback holds only the frames of the one task that raised it
    depths = set()
    for exc in raised[:3]:
        tb, depth = exc.__traceback__, 0
        while tb is not None:
            tb, depth = tb.tb_next, depth + 1
        depths.add(depth)
    assert len(depths) == 1


async def test_a_connection_closed_error_keeps_its_type_per_caller() -> None:
    table = PendingTable()
    first, second = await table.allocate("a"), await table.allocate("b")
    table.fail_all(ConnectionClosedError("Connection closed: gone"))
    errors = []
    for call in (first, second):
        with pytest.raises(ConnectionClosedError, match="gone") as info:
            await call.wait()
        errors.append(info.value)
    assert errors[0] is not errors[1]

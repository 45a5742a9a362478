"""Per-request tasks and scopes, and ``notifications/cancelled`` from the peer."""

from __future__ import annotations

from typing import Any

import trio

from trimcp.dispatch import Registry
from trimcp.nursery import HandlerContext
from trimcp.wire import Notification, Request, Response

from ._support import init_params, no_leaked_tasks, raw_session


def _gated_registry(log: dict[str, Any]) -> Registry:
    """``wait`` blocks until its gate opens; records task, scope and outcome per id."""
    registry = Registry()
    log.setdefault("gates", {})
    log.setdefault("tasks", {})
    log.setdefault("scopes", {})
    log.setdefault("cancelled", set())
    log.setdefault("finished", set())

    async def wait(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        gate = log["gates"].setdefault(ctx.request_id, trio.Event())
        log["tasks"][ctx.request_id] = trio.lowlevel.current_task()
        log["scopes"][ctx.request_id] = ctx.cancel_scope
        try:
            await gate.wait()
        except trio.Cancelled:
            log["cancelled"].add(ctx.request_id)
            raise
        log["finished"].add(ctx.request_id)
        return {"id": ctx.request_id}

    registry.add_request("wait", wait)
    return registry


async def test_each_request_runs_in_its_own_task_and_scope() -> None:
    log: dict[str, Any] = {}
    async with no_leaked_tasks(), raw_session(_gated_registry(log)) as (peer, session):
        for i in (1, 2, 3):
            await peer.send(Request(id=i, method="wait"))
        await peer.settle()
        assert session.in_flight == 3
        tasks = log["tasks"]
        assert len(set(tasks.values())) == 3
        assert trio.lowlevel.current_task() not in tasks.values()
        scopes = log["scopes"]
        assert len({id(s) for s in scopes.values()}) == 3
        for gate in log["gates"].values():
            gate.set()
        answers = [await peer.receive() for _ in range(3)]
        assert sorted(a.id for a in answers) == [1, 2, 3]  # type: ignore[union-attr]


async def test_cancelled_cancels_exactly_that_request_and_sends_nothing_for_it() -> None:
    log: dict[str, Any] = {}
    async with raw_session(_gated_registry(log)) as (peer, session):
        for i in (1, 2, 3):
            await peer.send(Request(id=i, method="wait"))
        await peer.settle()
        await peer.send(
            Notification(method="notifications/cancelled", params={"requestId": 2, "reason": "x"})
        )
        await peer.settle()
        assert log["cancelled"] == {2}
        assert session.in_flight == 2
        assert peer.drain() == []  # silence for the cancelled request
        log["gates"][1].set()
        log["gates"][3].set()
        answers = [await peer.receive() for _ in range(2)]
        assert sorted(answers, key=lambda m: m.id) == [  # type: ignore[union-attr]
            Response(id=1, result={"id": 1}),
            Response(id=3, result={"id": 3}),
        ]
        assert await peer.quiet_drain() == []
        assert log["finished"] == {1, 3}


async def test_cancel_by_string_id() -> None:
    log: dict[str, Any] = {}
    async with raw_session(_gated_registry(log)) as (peer, session):
        await peer.send(Request(id="a", method="wait"))
        await peer.send(Request(id=1, method="wait"))
        await peer.settle()
        # A string id and the integer with the same text are different requests.
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": "1"}))
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": "a"}))
        await peer.settle()
        assert log["cancelled"] == {"a"}
        log["gates"][1].set()
        assert await peer.receive() == Response(id=1, result={"id": 1})
        assert session.in_flight == 0


async def test_initialize_cannot_be_cancelled() -> None:
    gate = trio.Event()
    registry = Registry()

    async def initialize(ctx: HandlerContext, params: Any) -> dict[str, Any]:
        await gate.wait()
        return {"ok": True}

    registry.add_request("initialize", initialize, cancellable=False)
    async with raw_session(registry) as (peer, _session):
        await peer.send(Request(id=0, method="initialize", params=init_params()))
        await peer.settle()
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": 0}))
        await peer.settle()
        gate.set()
        assert await peer.receive() == Response(id=0, result={"ok": True})


async def test_initialize_of_a_real_server_is_answered_despite_a_cancel() -> None:
    from trimcp.server import Server

    from ._support import served

    server = Server("s")
    route = server.registry.route("initialize")
    assert route is not None
    assert not route.cancellable
    async with served(server, initialize=False) as (peer, session):
        await peer.send(Request(id=0, method="initialize", params=init_params()))
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": 0}))
        reply = await peer.receive()
        assert isinstance(reply, Response)
        assert reply.id == 0
        assert reply.result["protocolVersion"] == "2025-11-25"
        assert session.state.initialized


async def test_cancel_for_unknown_finished_or_malformed_ids_is_ignored() -> None:
    log: dict[str, Any] = {}
    registry = _gated_registry(log)
    async with raw_session(registry) as (peer, session):
        log["gates"][1] = trio.Event()
        log["gates"][1].set()
        await peer.send(Request(id=1, method="wait"))
        assert await peer.receive() == Response(id=1, result={"id": 1})
        await peer.send(Request(id=2, method="wait"))
        await peer.settle()
        for params in (
            {"requestId": 1},  # finished
            {"requestId": 999},  # never seen
            {"requestId": True},  # not an id
            {"requestId": None},
            {},
            None,
        ):
            await peer.send(Notification(method="notifications/cancelled", params=params))
        assert await peer.quiet_drain() == []  # no reply of any kind
        assert log["cancelled"] == set()
        assert session.in_flight == 1
        log["gates"][2].set()
        assert await peer.receive() == Response(id=2, result={"id": 2})


async def test_a_cancelled_id_can_be_reused() -> None:
    log: dict[str, Any] = {}
    async with raw_session(_gated_registry(log)) as (peer, _session):
        await peer.send(Request(id=7, method="wait"))
        await peer.settle()
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": 7}))
        await peer.settle()
        assert log["cancelled"] == {7}
        log["gates"].pop(7)
        gate = log["gates"][7] = trio.Event()
        gate.set()
        await peer.send(Request(id=7, method="wait"))
        assert await peer.receive() == Response(id=7, result={"id": 7})

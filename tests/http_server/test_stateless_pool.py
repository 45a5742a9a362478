"""Stateless-era POSTs borrow idle sessions instead of building one each.

The era keeps no state between requests, so a session that answered one POST serves
the next (:meth:`~trimcp.transports.http.SessionManager.take_stateless`). What must
hold: every answer carries its client's id (even the same id, POST after POST), a
session is lent to one POST at a time, the idle ones are bounded by
``stateless_pool`` and give way when the session table is full.
"""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

import trimcp
from trimcp.middleware import RateLimit

from ..stateless._http import stateless_headers
from ..stateless._support import meta
from ._asgi import BASE, INIT_PARAMS, AsgiClient, Exchange, rpc, running
from ._fixture import make_server


def _call(client: AsgiClient, request_id: Any, tool: str, **arguments: Any) -> Exchange:
    params = {"name": tool, "arguments": arguments, "_meta": meta()}
    headers = dict(BASE, **stateless_headers("tools/call", params))
    return client.start("POST", rpc(request_id, "tools/call", params), headers)


async def _answer(exchange: Exchange) -> dict[str, Any]:
    with trio.fail_after(10):
        await exchange.complete.wait()
    assert exchange.status == 200, exchange.body
    answer: dict[str, Any] = exchange.json
    return answer


async def test_posts_one_after_another_share_one_session_and_keep_their_ids() -> None:
    server = make_server()
    async with running(server) as client:
        for n in range(5):
            answer = await _answer(_call(client, 7, "echo", text=f"hi {n}"))
            assert answer["id"] == 7  # the client's id, though the session saw another
            assert answer["result"]["content"][0]["text"] == f"hi {n}"
        string = await _answer(_call(client, "a", "echo", text="s"))
        assert string["id"] == "a"
        await trio.testing.wait_all_tasks_blocked()
        assert len(client.app.manager) == 1
        assert len(server.sessions) == 1


async def test_a_session_serves_one_post_at_a_time() -> None:
    server = make_server()
    state = server.test_state  # type: ignore[attr-defined]
    async with running(server) as client:
        slow = _call(client, 1, "wait_release")
        with trio.fail_after(10):
            await state["slow_started"].wait()
        fast = await _answer(_call(client, 1, "echo", text="meanwhile"))
        assert fast["id"] == 1
        assert len(server.sessions) == 2  # the busy one was not lent
        state["release"].set()
        released = await _answer(slow)
        assert released["id"] == 1
        assert released["result"]["content"][0]["text"] == "released"
        await trio.testing.wait_all_tasks_blocked()
        assert len(client.app.manager) == 2  # both idle now, kept
        await _answer(_call(client, 2, "echo", text="again"))
        await trio.testing.wait_all_tasks_blocked()
        assert len(server.sessions) == 2


async def test_no_pool_ends_each_session_with_its_post() -> None:
    server = make_server()
    limits = trimcp.HttpServerLimits(stateless_pool=0)
    async with running(server, limits=limits) as client:
        for n in range(3):
            assert (await _answer(_call(client, n, "echo", text="x")))["id"] == n
            await trio.testing.wait_all_tasks_blocked()
            assert len(client.app.manager) == 0
            assert not server.sessions


async def test_idle_sessions_give_way_when_the_table_is_full() -> None:
    server = make_server()
    limits = trimcp.HttpServerLimits(max_sessions=1)
    async with running(server, limits=limits) as client:
        await _answer(_call(client, 1, "echo", text="x"))
        await trio.testing.wait_all_tasks_blocked()
        assert len(client.app.manager) == 1
        init = await client.request("POST", rpc(1, "initialize", INIT_PARAMS), dict(BASE))
        assert init.status == 200, init.body
        assert "mcp-session-id" in init.headers


async def test_work_a_post_detached_ends_with_it_and_its_session_is_not_lent() -> None:
    """A stateless-era POST is a session of its own: what its handler detached ends
    with it, as it did when each POST had a session built for it; the session that ran
    it is not lent to the next caller."""
    server = make_server()
    seen: dict[str, Any] = {"started": trio.Event(), "cancelled": trio.Event()}

    async def linger(ctx: trimcp.HandlerContext) -> None:
        seen["started"].set()
        try:
            await trio.sleep_forever()
        finally:
            seen["cancelled"].set()

    @server.tool()
    async def detach(ctx: trimcp.ToolContext) -> str:
        ctx.detach_for_background(linger)
        return "detached"

    async with running(server) as client:
        answer = await _answer(_call(client, 1, "detach"))
        assert answer["result"]["content"][0]["text"] == "detached"
        with trio.fail_after(5):
            await seen["started"].wait()
            await seen["cancelled"].wait()
        await trio.testing.wait_all_tasks_blocked()
        assert len(client.app.manager) == 0  # not kept for the next POST
        assert (await _answer(_call(client, 2, "echo", text="next")))["id"] == 2


async def test_an_answer_over_the_output_budget_is_refused_under_the_clients_id() -> None:
    limits = trimcp.HttpServerLimits(output_session_bytes=256)
    async with running(make_server(), limits=limits) as client:
        for request_id in (7, "seven"):  # and the session it borrowed serves the next
            exchange = _call(client, request_id, "echo", text="x" * 4096)
            with trio.fail_after(10):
                await exchange.complete.wait()
            refused = exchange.json
            assert refused["id"] == request_id
            assert "output budget" in refused["error"]["message"]
        fits = await _answer(_call(client, 8, "echo", text="small"))
        assert fits["id"] == 8


async def test_posts_that_borrow_one_session_never_share_a_rate_limit_bucket() -> None:
    server = make_server()
    RateLimit(rate=0.001, burst=1).install(server.middlewares)
    async with running(server) as client:
        for n in range(3):  # one session lent three times: each borrower its own bucket
            answer = await _answer(_call(client, n, "echo", text="hi"))
            assert answer["result"]["content"][0]["text"] == "hi"
        await trio.testing.wait_all_tasks_blocked()
        assert len(server.sessions) == 1

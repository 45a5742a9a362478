"""Property: a stateless-era POST over HTTP is a session of its own, though the server
lends it a pooled one.

For any mix of POSTs, one after another or at once: no POST is answered from a private
cache entry another left, every POST gets its own id back (an answer the output budget
refuses included), and what a handler detached has ended by the time its POST is
answered and the server is idle.
"""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.middleware import ResponseCache
from trimcp.server import CachePolicy

from ..http_server._asgi import BASE, AsgiClient, running
from ..middleware._servers import tool_server
from ..stateless._http import stateless_headers
from ..stateless._support import meta

_OPS = st.lists(
    st.lists(st.sampled_from(["read", "detach", "echo", "big"]), min_size=1, max_size=4),
    min_size=1,
    max_size=5,
)  # batches run one after another; the POSTs of a batch at once

#: A session's output budget: a "big" answer is twice as large, and refused.
_BUDGET = 2048


def _server(lingering: dict[str, int]) -> trimcp.Server:
    server = tool_server(cache=CachePolicy(ttl_ms=60_000, scope="private"))

    async def linger(ctx: trimcp.HandlerContext) -> None:
        lingering["now"] += 1
        try:
            await trio.sleep_forever()
        finally:
            lingering["now"] -= 1

    @server.tool()
    async def detach(ctx: trimcp.ToolContext) -> str:
        ctx.detach_for_background(linger)
        return "detached"

    return server


async def _post(client: AsgiClient, request_id: int, op: str) -> dict[str, Any]:
    if op == "read":
        method, params = "resources/read", {"uri": "memo://today"}
    else:
        text = "x" * _BUDGET * 2 if op == "big" else "x"
        arguments = {"text": text} if op in ("echo", "big") else {}
        method, params = "tools/call", {"name": op.replace("big", "echo"), "arguments": arguments}
    params = {**params, "_meta": meta()}
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    headers = dict(BASE, **stateless_headers(method, params))
    exchange = client.start("POST", json.dumps(body).encode(), headers)
    with trio.fail_after(10):
        await exchange.complete.wait()
    assert exchange.status == 200, exchange.body
    answer: dict[str, Any] = exchange.json
    return answer


async def _run(batches: list[list[str]]) -> None:
    lingering = {"now": 0}
    server = _server(lingering)
    cache = ResponseCache()
    cache.install(server.middlewares)
    reads: list[str] = []
    ids = iter(range(1, 1000))
    limits = trimcp.HttpServerLimits(output_session_bytes=_BUDGET)
    async with running(server, limits=limits) as client:
        for batch in batches:

            async def one(op: str, request_id: int) -> None:
                answer = await _post(client, request_id, op)
                assert answer["id"] == request_id
                assert ("error" in answer) == (op == "big")
                if op == "read":
                    reads.append(answer["result"]["contents"][0]["text"])

            async with trio.open_nursery() as nursery:
                for op in batch:
                    nursery.start_soon(one, op, next(ids))
            await trio.testing.wait_all_tasks_blocked()
            assert lingering["now"] == 0  # detached work ended with its POST
    assert len(set(reads)) == len(reads)  # never another POST's private entry
    assert cache.hits == 0


@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_each_stateless_post_is_a_session_of_its_own(batches: list[list[str]]) -> None:
    trio.run(_run, batches, clock=trio.testing.MockClock(autojump_threshold=0))

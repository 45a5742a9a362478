"""Property: a POST whose requests end with their HTTP session (``DELETE``) is answered
with errors that name those requests, whatever their ids, singly or in a batch."""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from ..http_server._asgi import INIT_PARAMS, rpc, running
from ..http_server._fixture import make_server

ids = st.one_of(
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
)


async def _ended_by_delete(request_ids: list[Any]) -> Any:
    async with running(make_server()) as client:
        batch = len(request_ids) > 1
        version = "2025-03-26" if batch else "2025-11-25"  # batches: 2025-03-26 only
        await client.initialize({**INIT_PARAMS, "protocolVersion": version})
        calls = [rpc(n, "tools/call", {"name": "wait_release"}) for n in request_ids]
        body = b"[" + b",".join(calls) + b"]" if batch else calls[0]
        call = client.start("POST", body, client.headers())
        await trio.testing.wait_all_tasks_blocked()
        reply = await client.request("DELETE", b"", client.headers())
        assert reply.status == 200
        await call.complete.wait()
        assert call.status == 404
        return json.loads(call.body)


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(ids, min_size=1, max_size=3, unique=True))
def test_errors_at_the_end_of_a_session_name_their_requests(request_ids: list[Any]) -> None:
    clock = trio.testing.MockClock(autojump_threshold=0)
    answer = trio.run(_ended_by_delete, request_ids, clock=clock)
    answers = answer if isinstance(answer, list) else [answer]
    assert [a["id"] for a in answers] == request_ids
    assert all(a["error"]["code"] == -32001 for a in answers)

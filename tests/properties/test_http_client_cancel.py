"""Property: however calls over Streamable HTTP are given up (before, while or after
their POST is written, with fewer connections than calls), each request is POSTed at
most once, a ``notifications/cancelled`` only ever names a request the server received
before it, every call that was not given up gets its answer, and nothing stays pending.
"""

from __future__ import annotations

import os

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.transports.http import StreamableHttp

from ..http_client._fake import Exchange, FakeRequest, mcp_app, result, start_server

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "15"))

# Per call: (start, answer delay, give up after or None), in whole virtual seconds.
calls = st.lists(
    st.tuples(st.integers(0, 3), st.integers(1, 4), st.one_of(st.none(), st.integers(0, 5))),
    min_size=1,
    max_size=6,
)


async def _play(connections: int, script: list[tuple[int, int, int | None]]) -> None:
    delays = {f"c{n}": delay for n, (_, delay, _) in enumerate(script)}

    async def answer_later(request: FakeRequest, ex: Exchange) -> None:
        await trio.sleep(delays[request.message["params"]["name"]])
        await ex.json(result(request, {"content": []}))

    answered: list[str] = []
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": answer_later}))
        transport = StreamableHttp(url=server.url, listen=False, max_connections=connections)
        with trio.fail_after(300):
            async with trimcp.open_client(transport, era="handshake") as client:

                async def call(n: int, start: int, give_up: int | None) -> None:
                    await trio.sleep(start + n / 100)
                    with trio.move_on_after(give_up if give_up is not None else 1e6):
                        answer = await client.call_tool(f"c{n}")
                        assert not answer.is_error
                        answered.append(f"c{n}")

                async with trio.open_nursery() as callers:
                    for n, (start, _, give_up) in enumerate(script):
                        callers.start_soon(call, n, start, give_up)
                await trio.sleep(10)  # the cancellations sent last reach the server
                assert client.session.pending == 0
        nursery.cancel_scope.cancel()

    posted = server.of("POST", "tools/call")
    names = [r.message["params"]["name"] for r in posted]
    assert len(names) == len(set(names))  # each request POSTed at most once
    received = {r.message["id"]: r.time for r in posted}
    for note in server.of("POST", "notifications/cancelled"):
        request_id = note.message["params"]["requestId"]
        assert request_id in received  # never for a request the server did not get
        assert received[request_id] <= note.time
    kept = {f"c{n}" for n, (_, _, give_up) in enumerate(script) if give_up is None}
    assert kept <= set(answered)


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(st.integers(1, 3), calls)
def test_given_up_calls_are_posted_at_most_once_and_cancelled_only_when_sent(
    connections: int, script: list[tuple[int, int, int | None]]
) -> None:
    clock = trio.testing.MockClock(autojump_threshold=0.02)
    trio.run(_play, connections, script, clock=clock)

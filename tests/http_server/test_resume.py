"""Resumability and SSE polling (B46, B47, B40): the event store, ``Last-Event-ID``,
the server closing a request's stream mid-call, and bounded per-stream queues."""

from __future__ import annotations

import pytest
import trio

from trimcp.transports.http import HttpServerLimits, MemoryEventStore

from ._asgi import rpc, running
from ._fixture import make_server


def sse_headers(client, **extra):  # type: ignore[no-untyped-def]
    return client.headers(accept="text/event-stream", **extra)


async def test_polling_close_then_resume_gets_rest_and_result() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        call = client.start("POST", rpc(1, "tools/call", {"name": "poll"}), client.headers())
        with trio.fail_after(5):
            await call.complete.wait()
        assert call.headers["content-type"] == "text/event-stream"
        assert call.body.startswith(b"id: ")
        assert [m["params"]["data"] for m in call.messages] == ["before close"]
        assert call.retry == 50  # the handler's retry_ms, sent before the close
        last = call.event_ids[-1]
        server.test_state["release"].set()
        await trio.testing.wait_all_tasks_blocked()
        resume = await client.request("GET", b"", sse_headers(client, last_event_id=last))
        assert resume.status == 200
        messages = resume.messages
        assert messages[0]["params"]["data"] == "after close"
        assert messages[-1]["id"] == 1
        assert messages[-1]["result"]["content"][0]["text"] == "closed=True"


async def test_resume_while_running_continues_live() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        call = client.start("POST", rpc(1, "tools/call", {"name": "poll"}), client.headers())
        with trio.fail_after(5):
            await call.complete.wait()
        resume = client.start("GET", b"", sse_headers(client, last_event_id=call.event_ids[0]))
        with trio.fail_after(5):
            await resume.wait_message(1)  # "before close" replayed (it came after the priming id)
        assert resume.messages[0]["params"]["data"] == "before close"
        server.test_state["release"].set()
        with trio.fail_after(5):
            await resume.complete.wait()
        assert resume.messages[-1]["result"]["content"][0]["text"] == "closed=True"


async def test_resumption_is_not_the_standalone_stream() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        get = client.start("GET", b"", sse_headers(client))
        call = client.start("POST", rpc(1, "tools/call", {"name": "poll"}), client.headers())
        with trio.fail_after(5):
            await call.complete.wait()
        server.test_state["release"].set()
        await trio.testing.wait_all_tasks_blocked()
        resume = await client.request(
            "GET", b"", sse_headers(client, last_event_id=call.event_ids[-1])
        )
        assert resume.status == 200
        assert resume.messages[-1]["id"] == 1
        assert get.messages == []  # nothing of the request leaked onto the GET stream
        get.disconnect.set()


async def test_client_disconnect_is_not_cancellation_and_result_is_stored() -> None:
    server = make_server()
    async with running(server) as client:
        await client.initialize()
        body = rpc(4, "tools/call", {"name": "poll"})
        call = client.start("POST", body, client.headers())
        with trio.fail_after(5):
            await call.complete.wait()
        # Now a request that goes SSE, then the client vanishes mid-stream.
        chat = client.start(
            "POST",
            rpc(
                5,
                "tools/call",
                {
                    "name": "ask",
                    "arguments": {"prompt": "p"},
                },
            ),
            client.headers(),
        )
        with trio.fail_after(5):
            (sampling,) = await chat.wait_message(1)
        chat.disconnect.set()
        with trio.fail_after(5):
            await chat.complete.wait()
        answer = (
            b'{"jsonrpc":"2.0","id":'
            + str(sampling["id"]).encode()
            + b',"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}'
        )
        assert (await client.post(answer)).status == 202
        await trio.testing.wait_all_tasks_blocked()
        resume = await client.request(
            "GET", b"", sse_headers(client, last_event_id=chat.event_ids[-1])
        )
        assert resume.messages[-1]["id"] == 5
        assert resume.messages[-1]["result"]["content"][0]["text"] == "model said: ok"
        server.test_state["release"].set()


@pytest.mark.parametrize(
    "last_event_id", ["garbage", "99-1", "1-999999", "0-x", "a" * 300, "1-2\x01"]
)
async def test_unknown_or_malformed_last_event_id_is_400(last_event_id: str) -> None:
    async with running(make_server()) as client:
        await client.initialize()
        reply = await client.request("GET", b"", sse_headers(client, last_event_id=last_event_id))
        assert reply.status == 400


async def test_replay_never_crosses_streams() -> None:
    async with running(make_server()) as client:
        await client.initialize()
        a = await client.post(
            rpc(
                1,
                "tools/call",
                {
                    "name": "chatty",
                    "arguments": {"count": 2},
                    "_meta": {"progressToken": "a"},
                },
            )
        )
        b = await client.post(
            rpc(
                2,
                "tools/call",
                {
                    "name": "chatty",
                    "arguments": {"count": 2},
                    "_meta": {"progressToken": "b"},
                },
            )
        )
        replay = await client.request("GET", b"", sse_headers(client, last_event_id=a.event_ids[0]))
        assert replay.messages == a.messages
        replay_b = await client.request(
            "GET", b"", sse_headers(client, last_event_id=b.event_ids[2])
        )
        assert replay_b.messages == b.messages[2:]
        assert all(m.get("id") != 1 for m in replay_b.messages)


async def test_store_is_per_session() -> None:
    async with running(make_server()) as client:
        from ._asgi import AsgiClient

        other = AsgiClient(client.app, client.nursery)
        await client.initialize()
        await other.initialize()
        a = await client.post(
            rpc(
                1,
                "tools/call",
                {
                    "name": "chatty",
                    "arguments": {"count": 1},
                    "_meta": {"progressToken": "a"},
                },
            )
        )
        stolen = await other.request("GET", b"", sse_headers(other, last_event_id=a.event_ids[0]))
        assert stolen.status == 400


async def test_memory_store_bounds() -> None:
    store = MemoryEventStore(max_events=3, max_bytes=100, max_streams=2)
    first = await store.store("1", None)
    ids = [await store.store("1", b"x%d" % n) for n in range(5)]
    # x0 and x1 were evicted: a replay from before them would skip them, so it is refused.
    gap = await store.replay_after(first)
    assert gap is not None
    assert gap.gap
    assert not gap.events
    replay = await store.replay_after(ids[1])
    assert replay is not None
    assert not replay.gap
    assert [data for _, data in replay.events] == [b"x2", b"x3", b"x4"]
    await store.store("1", b"y" * 99)
    assert len(store) == 1
    await store.store("2", b"a")
    await store.store("3", b"b")
    evicted = await store.replay_after(ids[-1])  # stream 1 evicted whole
    assert evicted is not None
    assert evicted.gap
    assert await store.replay_after("not-an-id") is None
    assert await store.replay_after("1-999") is None  # never issued


async def test_slow_consumer_stream_is_closed_and_memory_bounded() -> None:
    limits = HttpServerLimits(stream_queue_events=16)
    async with running(make_server(), limits=limits) as client:
        await client.initialize()
        call = await client.stalled_call(1, "flood", {"count": 500})
        (channel,) = client.app.manager._scopes
        # The tool finished (it was never blocked by the stalled client) ...
        assert not channel.in_flight(1)
        # ... and the stream's queue was dropped instead of growing.
        assert all(len(s.outbox or []) <= 16 for s in channel._live.values())
        call.disconnect.set()


async def test_no_event_store_means_no_priming_and_no_polling() -> None:
    async with running(make_server(), event_store=None) as client:
        await client.initialize()
        reply = await client.post(
            rpc(
                1,
                "tools/call",
                {
                    "name": "chatty",
                    "arguments": {"count": 1},
                    "_meta": {"progressToken": 1},
                },
            )
        )
        assert b"id:" not in reply.body
        assert len(reply.messages) == 3


async def test_json_response_larger_than_stream_bound_is_still_delivered() -> None:
    limits = HttpServerLimits(stream_queue_bytes=1024)
    async with running(make_server(), limits=limits) as client:
        await client.initialize()
        text = "y" * 5000
        reply = await client.post(
            rpc(1, "tools/call", {"name": "echo", "arguments": {"text": text}})
        )
        assert reply.status == 200, (reply.headers, reply.body[:300])
        assert reply.json["result"]["content"][0]["text"] == text

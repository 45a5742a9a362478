"""The GET stream and resumption: retry, Last-Event-ID, 405, bounded reconnects."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.protocol import LoggingMessageParams
from trimcp.transports.http import StreamableHttp

from ._fake import Exchange, FakeRequest, mcp_app, result, start_server

WAIT = 300


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 20 ms of real idleness (real loopback I/O)."""
    return trio.testing.MockClock(autojump_threshold=0.02)


def log(text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": text},
    }


async def test_get_stream_carries_notifications_and_reverse_requests(
    clock: trio.testing.MockClock,
) -> None:
    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        await ex.start_sse()
        await ex.event(log("hello"), id="g1")
        await ex.event({"jsonrpc": "2.0", "id": 77, "method": "ping"}, id="g2")
        await trio.sleep_forever()

    logs: list[LoggingMessageParams] = []

    async def on_log(params: LoggingMessageParams) -> None:
        logs.append(params)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url), on_log=on_log, era="handshake"
            ):
                await trio.sleep(5)
        nursery.cancel_scope.cancel()
    assert [entry.data for entry in logs] == ["hello"]
    (get,) = server.of("GET")
    assert get.headers["accept"] == "text/event-stream"
    assert get.headers["mcp-session-id"] == "s-1"
    assert get.headers["mcp-protocol-version"] == "2025-11-25"
    initialized = server.of("POST", "notifications/initialized")[0]
    assert get.time >= initialized.time
    answers = [r.message for r in server.of("POST") if r.message.get("id") == 77]
    assert answers == [{"jsonrpc": "2.0", "id": 77, "result": {}}]


async def test_get_reconnects_after_retry_with_last_event_id(
    clock: trio.testing.MockClock,
) -> None:
    ended: list[float] = []

    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        await ex.start_sse()
        if "last-event-id" not in request.headers:
            await ex.event(log("first"), id="g1", retry=3000)
            ended.append(trio.current_time())
            await ex.end()
            return
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(trimcp.streamable_http(server.url), era="handshake"):
                await trio.sleep(20)
        nursery.cancel_scope.cancel()
    first, second = server.of("GET")
    assert "last-event-id" not in first.headers
    assert second.headers["last-event-id"] == "g1"
    assert 3.0 <= second.time - ended[0] < 3.5


async def test_no_retry_after_405(clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app())  # GET -> 405
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url), era="handshake"
            ) as client:
                await trio.sleep(120)
                await client.ping()  # the session is unaffected
        nursery.cancel_scope.cancel()
    assert len(server.of("GET")) == 1


@pytest.mark.parametrize("status", [None, 503])
async def test_reconnects_without_progress_are_bounded_with_backoff(
    clock: trio.testing.MockClock, status: int | None
) -> None:
    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        if status is not None:
            await ex.respond(status)
            return
        await ex.start_sse()  # 200 and an empty stream: no progress
        await ex.end()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_get=on_get))
        transport = StreamableHttp(url=server.url, max_reconnects=4)
        with trio.fail_after(WAIT):
            async with trimcp.open_client(transport, era="handshake"):
                await trio.sleep(200)
        nursery.cancel_scope.cancel()
    times = [r.time for r in server.of("GET")]
    assert len(times) == 4
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert 1.0 <= gaps[0] < 1.1  # the default delay
    assert 1.0 <= gaps[1] <= 2.1  # 2 s with jitter, never below the delay
    assert 2.0 <= gaps[2] <= 4.1


async def test_progress_resets_the_reconnect_bound(clock: trio.testing.MockClock) -> None:
    counter = iter(range(1000))

    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        await ex.start_sse()
        await ex.event(log("tick"), id=f"g{next(counter)}", retry=100)
        await ex.end()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                StreamableHttp(url=server.url, max_reconnects=2), era="handshake"
            ):
                await trio.sleep(2.05)
        nursery.cancel_scope.cancel()
    gets = server.of("GET")
    assert len(gets) >= 15  # every 100 ms, never giving up
    assert gets[5].headers["last-event-id"] == "g4"


async def test_other_4xx_stops_the_get_stream(clock: trio.testing.MockClock) -> None:
    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        await ex.respond(409)

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(trimcp.streamable_http(server.url), era="handshake"):
                await trio.sleep(60)
        nursery.cancel_scope.cancel()
    assert len(server.of("GET")) == 1


def resumable_call(*, answer_on_get: bool = True) -> tuple[Any, Any, list[float]]:
    """A tools/call whose SSE stream ends after a priming event (server-side polling)."""
    ended: list[float] = []
    pending: dict[str, FakeRequest] = {}

    async def call(request: FakeRequest, ex: Exchange) -> None:
        pending["call"] = request
        await ex.start_sse()
        await ex.event(None, id="p1", retry=500)
        await trio.sleep(0.05)
        ended.append(trio.current_time())
        await ex.end()

    async def on_get(request: FakeRequest, ex: Exchange) -> None:
        if "last-event-id" not in request.headers:
            await ex.respond(405)
            return
        await ex.start_sse()
        await ex.event(None, id="p2", retry=500)
        if answer_on_get and "call" in pending:
            answer = result(pending["call"], {"content": [{"type": "text", "text": "resumed"}]})
            await ex.event(answer, id="p3")
            await trio.sleep_forever()
        await ex.end()

    return call, on_get, ended


async def test_post_stream_resumed_with_get_after_retry(clock: trio.testing.MockClock) -> None:
    call, on_get, ended = resumable_call()
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}, on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url), era="handshake"
            ) as client:
                answer = await client.call_tool("test_reconnection")
        nursery.cancel_scope.cancel()
    assert answer.content[0].text == "resumed"  # type: ignore[union-attr]
    resumed = [r for r in server.of("GET") if "last-event-id" in r.headers]
    assert len(resumed) == 1
    assert resumed[0].headers["last-event-id"] == "p1"
    assert 0.5 <= resumed[0].time - ended[0] < 0.6


async def test_post_stream_that_cannot_be_resumed_fails_its_call(
    clock: trio.testing.MockClock,
) -> None:
    call, on_get, _ended = resumable_call(answer_on_get=False)
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}, on_get=on_get))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url), era="handshake"
            ) as client:
                with pytest.raises(trimcp.ConnectionClosedError, match="could not be resumed"):
                    await client.call_tool("test_reconnection")
                await client.ping()  # only that call failed
        nursery.cancel_scope.cancel()
    # Each resumed GET brought a new id (p2) only once: later ones are misses.
    resumed = [r for r in server.of("GET") if "last-event-id" in r.headers]
    assert [r.headers["last-event-id"] for r in resumed][:2] == ["p1", "p2"]
    assert len(resumed) == 4  # one productive, then max_reconnects (3) misses


async def test_post_stream_ending_without_id_or_answer_fails_the_call(
    clock: trio.testing.MockClock,
) -> None:
    async def call(request: FakeRequest, ex: Exchange) -> None:
        await ex.start_sse()
        await ex.event(log("working"))
        await ex.end()

    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app({"tools/call": call}))
        with trio.fail_after(WAIT):
            async with trimcp.open_client(
                trimcp.streamable_http(server.url, listen=False), era="handshake"
            ) as client:
                with pytest.raises(trimcp.ConnectionClosedError, match="without an answer"):
                    await client.call_tool("t")
                await client.ping()
        nursery.cancel_scope.cancel()

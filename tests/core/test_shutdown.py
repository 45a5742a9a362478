"""``Server.shutdown()``: refuse new work, end the listens, grace, cancel, return.

Every test runs under the autojump clock over memory channels or memory byte streams
(the stdio framing), so the grace period and the cancellations are exact virtual times.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.dispatch import ConnectionClosedError, McpError
from trimcp.nursery import Session, SessionLimits
from trimcp.transports import MemoryChannel, StreamChannel
from trimcp.wire import ErrorResponse, Message, Notification, Request, Response, to_value

from ..faults._bytes import BytePeer, error_of
from ..stateless._support import StatelessCheck, params, validate_value

SUB = "io.modelcontextprotocol/subscriptionId"


def _server() -> tuple[trimcp.Server, list[str]]:
    server = trimcp.Server("shutdown-test", version="1.0", declare_tools=True)
    ran: list[str] = []

    @server.tool()
    async def work(seconds: float) -> str:
        """Takes ``seconds`` of (virtual) time."""
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            ran.append(f"cancelled after {trio.current_time():g}")
            raise
        ran.append(f"work {seconds:g} done")
        return f"worked {seconds:g}"

    @server.tool()
    async def stubborn(seconds: float) -> str:
        """Ignores cancellation for ``seconds``."""
        with trio.CancelScope(shield=True):
            await trio.sleep(seconds)
        ran.append("stubborn done")
        return "never sent"

    return server, ran


@asynccontextmanager
async def _served(
    server: trimcp.Server,
) -> AsyncIterator[tuple[trio.MemorySendChannel[Message], trio.MemoryReceiveChannel[Message]]]:
    """A raw peer over a memory channel pair; the session must end by the shutdown."""
    to_session, session_in = trio.open_memory_channel[Message](64)
    session_out, from_session = trio.open_memory_channel[Message](64)
    async with trio.open_nursery() as nursery:
        session: Session = await nursery.start(
            server.serve_channel, MemoryChannel(session_out, session_in)
        )
        yield to_session, from_session
    assert session.is_closed
    assert session.in_flight == session.queued == session.background_tasks == 0
    assert not server.sessions


async def _drain(receive: trio.MemoryReceiveChannel[Message]) -> list[Message]:
    """Everything the session sent until it closed its side."""
    return [message async for message in receive]


def _call(id: str, tool: str, seconds: float) -> Request:
    return Request(
        id=id,
        method="tools/call",
        params=params({"name": tool, "arguments": {"seconds": seconds}}),
    )


async def test_listens_end_with_their_result_and_the_grace_is_exact(autojump_clock: Any) -> None:
    """Stateless era: every message is checked against the 2026-07-28 schema."""
    server, ran = _server()
    checker = StatelessCheck().install(server.middlewares)
    async with _served(server) as (send, receive), trio.open_nursery() as nursery:
        listen = params({"notifications": {"toolsListChanged": True}})
        await send.send(Request(id="L", method="subscriptions/listen", params=listen))
        ack = await receive.receive()
        assert isinstance(ack, Notification)
        assert ack.method == "notifications/subscriptions/acknowledged"
        await send.send(_call("quick", "work", 2))
        await send.send(_call("slow", "work", 60))
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        returned: list[float] = []

        async def shut_down() -> None:
            await server.shutdown(grace=5)
            returned.append(trio.current_time() - start)

        nursery.start_soon(shut_down)
        await trio.testing.wait_all_tasks_blocked()
        assert server.shutdown_control.requested
        # A new request during the shutdown is refused; the session still answers it.
        await send.send(Request(id="new", method="tools/list", params=params()))
        answers = {}
        async for message in receive:
            assert isinstance(message, Response | ErrorResponse), message
            answers[message.id] = (message, trio.current_time() - start)
    listen_end, at = answers.pop("L")
    assert at == 0  # ended at once, with its result
    assert isinstance(listen_end, Response)
    assert listen_end.result["_meta"][SUB] == "L"
    assert validate_value(to_value(listen_end), "subscriptions/listen") == (
        "SubscriptionsListenResult"
    )
    refused, _ = answers.pop("new")
    assert isinstance(refused, ErrorResponse)
    assert (refused.error.code, refused.error.message) == (-32000, "Server is shutting down")
    quick, at = answers.pop("quick")
    assert isinstance(quick, Response)
    assert at == 2
    assert quick.result["content"][0]["text"] == "worked 2"
    assert answers == {}  # "slow" was cancelled at the grace: no response
    assert ran == ["work 2 done", f"cancelled after {start + 5:g}"]
    assert len(returned) == 1
    assert 5 <= returned[0] <= 5.05
    seen = checker.validate()
    assert seen["SubscriptionsListenResult"] == seen["CallToolResult"] == 1
    # After a shutdown the server can be served again.
    assert not server.shutdown_control.requested
    async with _served(server) as (send, receive):
        await send.send(Request(id="again", method="tools/list", params=params()))
        assert isinstance(await receive.receive(), Response)
        await server.shutdown()


async def test_a_shielded_handler_is_reported_and_shutdown_returns_in_bound(
    autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """B18: shutdown returns within grace + abandon_after and names the request; the
    serve function returns when the shielded handler ends; no response for it."""
    server, ran = _server()
    served_until: list[float] = []
    async with trio.open_nursery() as nursery:
        async with _served(server) as (send, receive):
            await send.send(_call("s", "stubborn", 30))
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
            with caplog.at_level(logging.WARNING, logger="trimcp.server"):
                await server.shutdown(grace=5, abandon_after=1)
            assert trio.current_time() - start == 6
            nursery.start_soon(_collect, receive, served_until, start)
        # The session (and so the serve function) lasted until the handler ended.
        assert trio.current_time() - start == 30
    assert ran == ["stubborn done"]
    assert served_until == [30]  # the peer saw its channel close then, with no answer
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "'s' (tools/call) ignored its cancellation for 1 s" in warnings[0]


async def _collect(
    receive: trio.MemoryReceiveChannel[Message], at: list[float], start: float
) -> None:
    assert await _drain(receive) == []
    at.append(trio.current_time() - start)


async def test_stdio_framing_and_handshake_era(autojump_clock: Any) -> None:
    """Over a byte stream (as stdio): the call in the grace is answered, a new one gets
    the error, and the server closes its output at the end."""
    server, ran = _server()
    peer_stream, server_stream = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve_channel, StreamChannel(server_stream, server_stream))
        peer = BytePeer(peer_stream, None, None)
        await peer.initialize()
        await peer.send(_wire_call(1, 3))
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(lambda: server.shutdown(grace=10))
        await trio.testing.wait_all_tasks_blocked()
        refused = await peer.request(2, "ping")
        assert error_of(refused) == (2, -32000)
        answer = await peer.read()
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == "worked 3"
        with pytest.raises(EOFError):
            await peer.read()
    # Idle once the answer is out (polled): the rest of the grace is not waited out.
    assert 3 <= trio.current_time() <= 3.05
    assert ran == ["work 3 done"]


def _wire_call(id: int, seconds: float) -> dict[str, Any]:
    params = {"name": "work", "arguments": {"seconds": seconds}}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def test_in_memory_client(autojump_clock: Any) -> None:
    """A client of ``server.in_memory()``: its call in the grace is answered, a call
    during the shutdown gets the error, and afterwards the connection is closed."""
    server, _ran = _server()
    async with trimcp.open_client(server.in_memory()) as client, trio.open_nursery() as nursery:
        results: list[str] = []

        async def call() -> None:
            result = await client.call_tool("work", {"seconds": 4})
            results.append(result.content[0].text)  # type: ignore[union-attr]

        nursery.start_soon(call)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(server.shutdown)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(McpError) as refused:
            await client.call_tool("work", {"seconds": 1})
        assert refused.value.code == -32000
        await trio.sleep(5)
        assert results == ["worked 4"]
        with pytest.raises(ConnectionClosedError):
            await client.list_tools()


async def test_cancelling_the_shutdown_closes_everything_at_once(autojump_clock: Any) -> None:
    server, ran = _server()
    async with _served(server) as (send, receive):
        await send.send(_call("w", "work", 60))
        await trio.testing.wait_all_tasks_blocked()
        with trio.move_on_after(1):
            await server.shutdown(grace=30)
        assert await _drain(receive) == []
    assert ran == ["cancelled after 1"]


async def test_a_second_call_waits_and_a_session_opened_meanwhile_is_refused(
    autojump_clock: Any,
) -> None:
    server, _ran = _server()
    async with _served(server) as (send, receive), trio.open_nursery() as nursery:
        await send.send(_call("w", "work", 3))
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(server.shutdown)
        await trio.testing.wait_all_tasks_blocked()
        # A session that starts during the shutdown refuses its requests, and ends with it.
        async with _served(server) as (late_send, late_receive):
            await late_send.send(Request(id="late", method="ping"))
            refused = await late_receive.receive()
            assert isinstance(refused, ErrorResponse)
            assert refused.error.code == -32000
            start = trio.current_time()
            await server.shutdown()  # waits for the one under way
            assert 3 <= trio.current_time() - start <= 3.05
            assert await _drain(late_receive) == []
        answer = await receive.receive()
        assert isinstance(answer, Response)
        assert answer.id == "w"


async def test_a_listen_still_queued_at_the_shutdown_ends_with_its_result(
    autojump_clock: Any,
) -> None:
    server, _ran = _server()
    server.limits = SessionLimits(max_in_flight=1)
    async with _served(server) as (send, receive), trio.open_nursery() as nursery:
        await send.send(_call("w", "work", 2))
        listen = params({"notifications": {"toolsListChanged": True}})
        await send.send(Request(id="L", method="subscriptions/listen", params=listen))
        await trio.testing.wait_all_tasks_blocked()
        assert len(server.subscriptions) == 0  # queued behind "w"
        nursery.start_soon(partial(server.shutdown, grace=10))
        got = [message async for message in receive]
    assert trio.current_time() < 2.1  # not the grace: the listen ended once it started
    ids = [getattr(message, "id", None) for message in got]
    assert ids == ["w", None, "L"]  # the work's answer, the listen's ack, then its result
    assert isinstance(got[2], Response)
    assert validate_value(to_value(got[2]), "subscriptions/listen") == "SubscriptionsListenResult"

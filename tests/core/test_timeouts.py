"""Outbound request timeouts (autojump clock): expiry, progress, the hard cap, cancel."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from trimcp import RequestTimeoutError, Server, SessionLimits, ToolContext, open_client
from trimcp.dispatch import Registry
from trimcp.nursery import Role
from trimcp.wire import REQUEST_TIMEOUT, ErrorResponse, Notification, Request, Response

from ._schema_check import SchemaCheck
from ._support import RawServerTransport, raw_session, served


@pytest.fixture(params=[True, False], ids=["deadline-timer", "scope-per-call"])
def timed(request: pytest.FixtureRequest) -> bool:
    """Both ways a call is bounded: the session's deadline timer, or a scope of its own."""
    return bool(request.param)


def _cancel_of(message: Any) -> Any:
    assert isinstance(message, Notification), message
    assert message.method == "notifications/cancelled"
    assert message.params is not None
    return message.params["requestId"]


# ---------------------------------------------------------------- client -> server


async def test_no_answer_times_out_after_the_default_and_sends_cancelled(
    autojump_clock: Any, timed: bool
) -> None:
    assert SessionLimits().request_timeout == 60
    async with raw_session(Registry(), role=Role.CLIENT, timed=timed) as (peer, session):
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            failures: list[BaseException] = []

            async def call() -> None:
                try:
                    await session.request("slow/thing", {"x": 1})
                except RequestTimeoutError as exc:
                    failures.append(exc)

            nursery.start_soon(call)
            request = await peer.receive()
            assert isinstance(request, Request)
            assert _cancel_of(await peer.receive()) == request.id
        assert trio.current_time() - start == pytest.approx(60)
        (failure,) = failures
        assert failure.code == REQUEST_TIMEOUT
        assert "slow/thing" in str(failure)
        assert session.pending == 0
        # A late answer is dropped and counted, nothing else happens.
        await peer.send(Response(id=request.id, result={}))
        await peer.settle()
        assert session.dropped_answers == 1


async def test_call_tool_timeout_through_the_client_api(autojump_clock: Any) -> None:
    transport = RawServerTransport()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.answer_initialize)
        async with open_client(transport, era="handshake") as client:
            start = trio.current_time()
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("x", {}, timeout=7)
            assert trio.current_time() - start == pytest.approx(7)
            request = await transport.peer.receive()
            assert isinstance(request, Request)
            assert request.method == "tools/call"
            assert _cancel_of(await transport.peer.receive()) == request.id


async def _progress_every(peer: Any, request: Request, step: float, count: int) -> None:
    token = request.params["_meta"]["progressToken"]  # type: ignore[index]
    for i in range(count):
        await trio.sleep(step)
        await peer.send(
            Notification(
                method="notifications/progress", params={"progressToken": token, "progress": i}
            )
        )


async def test_progress_resets_the_timeout(autojump_clock: Any, timed: bool) -> None:
    async with raw_session(Registry(), role=Role.CLIENT, timed=timed) as (peer, session):
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        async def serve() -> None:
            request = await peer.receive()
            assert isinstance(request, Request)
            await _progress_every(peer, request, 50, 5)  # 250 s in all, 50 s apart
            await trio.sleep(50)
            await peer.send(Response(id=request.id, result={"done": True}))

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            result = await session.request("long", on_progress=on_progress)
        assert result == {"done": True}
        assert trio.current_time() - start == pytest.approx(300)
        assert seen == [0, 1, 2, 3, 4]
        assert await peer.quiet_drain() == []  # no cancel for a request that succeeded


async def test_progress_restarts_the_callers_own_timeout(autojump_clock: Any) -> None:
    """``timeout=`` survives progress: each notification restarts the caller's wait,
    never the session's (shorter) default ``request_timeout``."""
    server = Server("s")

    @server.tool()
    async def long(ctx: ToolContext) -> str:
        await trio.sleep(1)
        await ctx.report_progress(1, 2)
        await trio.sleep(89)  # beyond the 60 s default, within the caller's 100 s
        return "done"

    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with open_client(server.in_memory(), era="handshake") as client:
        assert client.session.limits.request_timeout == 60
        start = trio.current_time()
        result = await client.call_tool("long", timeout=100, on_progress=on_progress)
        assert result.content[0].text == "done"  # type: ignore[union-attr]
        assert trio.current_time() - start == pytest.approx(90)
    assert seen == [1]


async def test_after_progress_a_short_timeout_stays_short(autojump_clock: Any) -> None:
    async with raw_session(Registry(), role=Role.CLIENT) as (peer, session):

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            pass

        async def serve() -> None:
            request = await peer.receive()
            assert isinstance(request, Request)
            await _progress_every(peer, request, 4, 2)  # then silence

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with pytest.raises(RequestTimeoutError, match="within 5 s"):
                await session.request("long", timeout=5, on_progress=on_progress)
        assert trio.current_time() - start == pytest.approx(13)  # the last progress + 5
        assert _cancel_of(await peer.receive()) == 0


async def test_max_request_timeout_caps_the_total_even_with_progress(
    autojump_clock: Any, timed: bool
) -> None:
    limits = SessionLimits(request_timeout=60, max_request_timeout=200)
    async with raw_session(Registry(), role=Role.CLIENT, limits=limits, timed=timed) as (
        peer,
        session,
    ):

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            pass

        async def serve() -> None:
            request = await peer.receive()
            assert isinstance(request, Request)
            await _progress_every(peer, request, 30, 100)

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with pytest.raises(RequestTimeoutError):
                await session.request("long", on_progress=on_progress)
            assert trio.current_time() - start == pytest.approx(200)
            nursery.cancel_scope.cancel()
        assert _cancel_of(await peer.receive()) == 0
        assert session.pending == 0


async def test_a_caller_cancelling_its_scope_sends_cancelled(
    autojump_clock: Any, timed: bool
) -> None:
    async with raw_session(Registry(), role=Role.CLIENT, timed=timed) as (peer, session):
        with trio.move_on_after(3) as scope:
            await session.request("wait")
        assert scope.cancelled_caught
        request = await peer.receive()
        assert isinstance(request, Request)
        assert _cancel_of(await peer.receive()) == request.id
        assert session.pending == 0


async def test_initialize_is_never_followed_by_cancelled(autojump_clock: Any, timed: bool) -> None:
    async with raw_session(Registry(), role=Role.CLIENT, timed=timed) as (peer, session):
        with pytest.raises(RequestTimeoutError):
            await session.request("initialize", {}, timeout=5)
        request = await peer.receive()
        assert isinstance(request, Request)
        assert await peer.quiet_drain() == []  # initialize must not be cancelled
        assert session.pending == 0


# ---------------------------------------------------------------- server -> client


def _sampling_server(**kwargs: Any) -> Server:
    server = Server("s", **kwargs)

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        try:
            await ctx.sample("hi", max_tokens=1)
        except RequestTimeoutError:
            return "timed out"
        return "answered"

    @server.tool()
    async def ask_with_progress(ctx: ToolContext) -> str:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            pass

        try:
            await ctx.handler.request(
                "sampling/createMessage",
                {"messages": [], "maxTokens": 1},
                on_progress=on_progress,
            )
        except RequestTimeoutError:
            return "timed out"
        return "answered"

    return server


async def test_a_reverse_call_times_out_and_sends_cancelled(autojump_clock: Any) -> None:
    server = _sampling_server()
    check = SchemaCheck().install(server.middlewares)
    async with served(server, capabilities={"sampling": {}}) as (peer, session):
        start = trio.current_time()
        await peer.send(Request(id=1, method="tools/call", params={"name": "ask"}))
        reverse = await peer.receive()
        assert isinstance(reverse, Request)
        assert reverse.method == "sampling/createMessage"
        assert _cancel_of(await peer.receive()) == reverse.id
        answer = await peer.receive()
        assert isinstance(answer, Response)
        assert answer.result["content"][0]["text"] == "timed out"
        assert trio.current_time() - start == pytest.approx(60)
        assert session.pending == 0
    seen = check.validate("2025-11-25")
    assert seen["CancelledNotification"] == 1
    assert seen["CreateMessageRequest"] == 1


async def test_progress_resets_a_reverse_call_timeout_up_to_the_cap(autojump_clock: Any) -> None:
    limits = SessionLimits(request_timeout=60, max_request_timeout=150)
    server = _sampling_server(limits=limits)
    async with served(server, capabilities={"sampling": {}}) as (peer, _session):
        start = trio.current_time()
        await peer.send(Request(id=1, method="tools/call", params={"name": "ask_with_progress"}))
        reverse = await peer.receive()
        assert isinstance(reverse, Request)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_progress_every, peer, reverse, 40, 100)
            assert _cancel_of(await peer.receive()) == reverse.id
            assert trio.current_time() - start == pytest.approx(150)  # not 60: progress
            answer = await peer.receive()
            nursery.cancel_scope.cancel()
        assert isinstance(answer, Response)
        assert answer.result["content"][0]["text"] == "timed out"


async def test_a_reverse_call_answered_after_progress_succeeds(autojump_clock: Any) -> None:
    server = _sampling_server()
    async with served(server, capabilities={"sampling": {}}) as (peer, _session):
        await peer.send(Request(id=1, method="tools/call", params={"name": "ask_with_progress"}))
        reverse = await peer.receive()
        assert isinstance(reverse, Request)
        await _progress_every(peer, reverse, 45, 3)
        await trio.sleep(45)
        await peer.send(
            Response(
                id=reverse.id,
                result={
                    "role": "assistant",
                    "content": {"type": "text", "text": "x"},
                    "model": "m",
                },
            )
        )
        answer = await peer.receive()
        assert isinstance(answer, Response)
        assert answer.result["content"][0]["text"] == "answered"


async def test_handler_timeout_answers_request_timed_out(autojump_clock: Any) -> None:
    server = Server("s", limits=SessionLimits(handler_timeout=10))

    @server.tool()
    async def hang(ctx: ToolContext) -> str:
        await trio.sleep_forever()
        return "never"

    async with served(server) as (peer, session):
        start = trio.current_time()
        reply = await peer.request(1, "tools/call", {"name": "hang"})
        assert isinstance(reply, ErrorResponse)
        assert reply.error.code == REQUEST_TIMEOUT
        assert reply.error.message == "Request timed out"
        assert trio.current_time() - start == pytest.approx(10)
        assert session.in_flight == 0

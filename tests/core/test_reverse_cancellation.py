"""Cancelling a forward request cancels its reverse calls, and tells the client first."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import trio

from trimcp import (
    CreateMessageParams,
    CreateMessageResult,
    McpError,
    Server,
    SessionLimits,
    ToolContext,
    open_client,
)
from trimcp.dispatch import ConnectionClosedError, Middlewares
from trimcp.nursery import HandlerContext, Session
from trimcp.wire import REQUEST_TIMEOUT, ErrorResponse, Message, Notification, Request

from ._schema_check import SchemaCheck
from ._support import (
    WAIT,
    RecordingTransport,
    assert_session_clean,
    no_leaked_tasks,
    served,
    server_session,
)


class Blocked:
    """Client-side sampling handler that never answers; records what happened."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0

    async def __call__(
        self, ctx: HandlerContext, params: CreateMessageParams
    ) -> CreateMessageResult:
        self.started += 1
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


class Observed:
    """A fan-out tool plus observers on both sides of the connection."""

    def __init__(self, n: int = 3, limits: SessionLimits | None = None) -> None:
        self.server = Server("s", limits=limits)
        self.server_log: list[tuple[str, Any, int]] = []
        self.client_log: list[Message] = []
        self.reverse_ids: list[Any] = []
        self.middlewares = Middlewares()
        self.session: Session | None = None
        self.check = SchemaCheck().install(self.server.middlewares)

        @self.server.tool()
        async def fan(ctx: ToolContext) -> str:
            self.session = ctx.handler.session_object
            try:
                async with trio.open_nursery() as nursery:
                    for i in range(n):
                        nursery.start_soon(partial(ctx.sample, f"q{i}", max_tokens=1))
            finally:
                self.server_log.append(("forward exit", ctx.request_id, -1))
            return "all sampled"

        async def server_send(message: Message, call_next: Any) -> None:
            session = self.session
            if isinstance(message, Request):
                self.reverse_ids.append(message.id)
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                assert message.params is not None
                assert session is not None
                in_flight = session.in_flight
                self.server_log.append(("cancelled", message.params["requestId"], in_flight))
            await call_next(message)

        async def client_recv(message: Message, call_next: Any) -> None:
            self.client_log.append(message)
            await call_next(message)

        self.server.middlewares.server_send.add(server_send)
        self.middlewares.client_recv.add(client_recv)

    def client_cancels(self) -> list[Any]:
        return [
            m.params["requestId"]  # type: ignore[index]
            for m in self.client_log
            if isinstance(m, Notification) and m.method == "notifications/cancelled"
        ]

    def assert_cancel_flowed_down(self, n: int = 3) -> None:
        assert len(self.reverse_ids) == n
        cancels = [entry for entry in self.server_log if entry[0] == "cancelled"]
        assert sorted(c[1] for c in cancels) == sorted(self.reverse_ids)
        assert all(c[2] == 1 for c in cancels)  # the forward request was still in flight
        assert self.server_log[-1][0] == "forward exit"  # ... and its scope exited after
        assert sorted(self.client_cancels()) == sorted(self.reverse_ids)


async def test_client_cancelling_its_call_cancels_the_reverse_calls(autojump_clock: Any) -> None:
    obs = Observed()
    blocked = Blocked()
    async with (
        no_leaked_tasks(),
        open_client(
            obs.server.in_memory(), sampling=blocked, middlewares=obs.middlewares, era="handshake"
        ) as client,
    ):
        with trio.move_on_after(5) as scope:
            await client.call_tool("fan")
        assert scope.cancelled_caught
        await trio.testing.wait_all_tasks_blocked()
        obs.assert_cancel_flowed_down()
        assert blocked.started == 3
        assert blocked.cancelled == 3  # the client's handlers were cancelled in turn
        assert client.session.in_flight == 0
        assert client.session.pending == 0
        assert_session_clean(server_session(obs.server))
    assert obs.check.validate("2025-11-25")["CancelledNotification"] == 3


async def test_peer_cancel_of_the_forward_request_cancels_the_reverse_calls() -> None:
    server = Server("s")
    check = SchemaCheck().install(server.middlewares)
    exited: list[Any] = []

    @server.tool()
    async def fan(ctx: ToolContext) -> str:
        try:
            async with trio.open_nursery() as nursery:
                for i in range(2):
                    nursery.start_soon(partial(ctx.sample, f"q{i}", max_tokens=1))
        finally:
            exited.append(ctx.request_id)
        return "never"

    async with served(server, capabilities={"sampling": {}}) as (peer, session):
        await peer.send(Request(id=1, method="tools/call", params={"name": "fan"}))
        reverse = [await peer.receive(), await peer.receive()]
        assert all(isinstance(r, Request) for r in reverse)
        assert {r.method for r in reverse} == {"sampling/createMessage"}  # type: ignore[union-attr]
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": 1}))
        notes = [await peer.receive(), await peer.receive()]
        assert all(isinstance(n, Notification) for n in notes)
        assert {n.params["requestId"] for n in notes} == {r.id for r in reverse}  # type: ignore[union-attr, index]
        assert await peer.quiet_drain() == []  # no response for request 1
        assert exited == [1]
        assert session.pending == 0
        assert session.in_flight == 0
    assert check.validate("2025-11-25")["CancelledNotification"] == 2


async def test_handler_timeout_cancels_the_reverse_calls_first(autojump_clock: Any) -> None:
    obs = Observed(n=2, limits=SessionLimits(handler_timeout=5))
    blocked = Blocked()
    async with open_client(
        obs.server.in_memory(), sampling=blocked, middlewares=obs.middlewares, era="handshake"
    ) as client:
        start = trio.current_time()
        with pytest.raises(McpError) as info:
            await client.call_tool("fan")
        assert info.value.code == REQUEST_TIMEOUT
        assert trio.current_time() - start == pytest.approx(5)
        obs.assert_cancel_flowed_down(2)
        # On the client's side both cancellations arrived before the error response.
        kinds = [
            "cancel" if isinstance(m, Notification) else "error"
            for m in obs.client_log
            if isinstance(m, Notification | ErrorResponse)
            and not (isinstance(m, Notification) and m.method != "notifications/cancelled")
        ]
        assert kinds == ["cancel", "cancel", "error"]
        await trio.testing.wait_all_tasks_blocked()
        assert blocked.cancelled == 2


async def test_session_ending_cancels_the_reverse_calls_and_tells_the_client(
    autojump_clock: Any,
) -> None:
    obs = Observed(n=2)
    blocked = Blocked()
    async with open_client(
        obs.server.in_memory(), sampling=blocked, middlewares=obs.middlewares, era="handshake"
    ) as client:

        async def close_soon() -> None:
            await trio.sleep(1)
            server_session(obs.server).close()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(close_soon)
            with pytest.raises(ConnectionClosedError):
                await client.call_tool("fan")
        obs.assert_cancel_flowed_down(2)
        assert obs.server.sessions == frozenset()


async def test_cancel_notices_for_reverse_calls_go_with_the_forward_request() -> None:
    server = Server("s")
    started = trio.Event()

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        started.set()
        await ctx.sample("q", max_tokens=1)
        return "never"

    transport = RecordingTransport(server)
    async with open_client(transport, sampling=Blocked(), era="handshake") as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(client.call_tool, "ask"))
            with trio.fail_after(WAIT):
                await started.wait()
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
    assert transport.channel is not None
    sent = transport.channel.sent
    ((reverse, forward_id),) = [(m, rel) for m, rel in sent if isinstance(m, Request)]
    cancels = [
        (m, rel)
        for m, rel in sent
        if isinstance(m, Notification) and m.method == "notifications/cancelled"
    ]
    assert cancels == [
        (
            Notification(method="notifications/cancelled", params={"requestId": reverse.id}),
            forward_id,
        )
    ]


async def test_leaving_the_client_during_a_reverse_call_leaves_nothing_behind() -> None:
    server = Server("s")
    blocked = Blocked()
    started = trio.Event()

    @server.tool()
    async def ask(ctx: ToolContext) -> str:
        started.set()
        await ctx.sample("q", max_tokens=1)
        return "never"

    async with no_leaked_tasks():
        async with open_client(server.in_memory(), sampling=blocked, era="handshake") as client:
            session = server_session(server)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(client.call_tool, "ask"))
                with trio.fail_after(WAIT):
                    await started.wait()
                await trio.testing.wait_all_tasks_blocked()
                assert blocked.started == 1
                assert client.session.in_flight == 1
                nursery.cancel_scope.cancel()
        assert blocked.cancelled == 1
        assert_session_clean(client.session)
        assert_session_clean(session)

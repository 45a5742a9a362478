"""``subscriptions/listen`` on the client: acknowledged, demultiplexed, torn down."""

from __future__ import annotations

import pytest
import trio
import trio.testing

import trimcp
from trimcp.dispatch import Middlewares
from trimcp.wire import Message, Notification, Request

from ._peer import check_client_message

WAIT = 10


def build() -> trimcp.Server:
    server = trimcp.Server("listen", version="1")

    @server.tool()
    async def first() -> str:
        return "1"

    @server.resource("test://doc", mime_type="text/plain")
    async def doc() -> str:
        return "text"

    return server


async def test_notifications_reach_their_own_subscription_then_teardown() -> None:
    server = build()
    sent: list[Message] = []
    middlewares = Middlewares()

    @middlewares.client_send.add
    async def record(message: Message, call_next: trimcp.dispatch.CallNext) -> None:
        sent.append(message)
        await call_next(message)

    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            server.in_memory(), era="stateless", middlewares=middlewares
        ) as client:
            async with (
                client.listen(tools=True) as tools,
                client.listen(resource_uris=["test://doc"]) as docs,
            ):
                assert tools.acknowledged == {"toolsListChanged": True}
                assert docs.acknowledged == {"resourceSubscriptions": ["test://doc"]}
                assert len(server.subscriptions) == 2

                @server.tool()
                async def second() -> str:
                    return "2"

                server.notify_resource_updated("test://doc")
                note = await tools.__anext__()
                assert note.method == "notifications/tools/list_changed"
                assert (note.params or {})["_meta"][
                    "io.modelcontextprotocol/subscriptionId"
                ] == tools.id
                update = await docs.__anext__()
                assert update.method == "notifications/resources/updated"
                assert (update.params or {})["uri"] == "test://doc"
                assert tools.id != docs.id
            await trio.testing.wait_all_tasks_blocked()
            assert len(server.subscriptions) == 0
            assert len(client._listeners) == 0
            # the session goes on after the subscriptions ended
            assert (await client.call_tool("second")).content[0] == trimcp.TextContent(text="2")
    listens = [m for m in sent if isinstance(m, Request) and m.method == "subscriptions/listen"]
    assert len(listens) == 2
    for message in listens:
        check_client_message(message)
    cancels = [
        m for m in sent if isinstance(m, Notification) and m.method == "notifications/cancelled"
    ]
    assert {(m.params or {})["requestId"] for m in cancels} == {m.id for m in listens}


async def test_a_graceful_end_stops_the_iteration() -> None:
    server = build()
    with trio.fail_after(WAIT):
        async with (
            trimcp.open_client(server.in_memory(), era="stateless") as client,
            client.listen(tools=True) as sub,
        ):
            server.subscriptions.end_all()
            assert [note async for note in sub] == []
            assert sub.result is not None
            assert sub.error is None


async def test_the_buffer_is_bounded_and_counts_what_it_dropped() -> None:
    server = build()
    with trio.fail_after(WAIT):
        async with (
            trimcp.open_client(server.in_memory(), era="stateless") as client,
            client.listen(resource_uris=["test://doc"], buffer=2) as sub,
        ):
            for _ in range(5):
                server.notify_resource_updated("test://doc")
                await trio.testing.wait_all_tasks_blocked()
            assert sub.dropped == 3
            assert (await sub.__anext__()).method == "notifications/resources/updated"


async def test_listen_needs_the_stateless_era() -> None:
    with trio.fail_after(WAIT):
        async with trimcp.open_client(build().in_memory(), era="handshake") as client:
            with pytest.raises(trimcp.McpError, match="stateless-era"):
                async with client.listen(tools=True):
                    pass


async def test_the_routing_layer_is_there_only_while_a_subscription_is_open() -> None:
    """Messages of a client with no subscription pass no layer for subscriptions; while
    one is open its routing is the outermost receive middleware, before the user's."""
    server = build()
    middlewares = Middlewares()
    seen: list[str] = []

    @middlewares.client_recv.add
    async def watch(message: Message, call_next: trimcp.dispatch.CallNext) -> None:
        seen.append(getattr(message, "method", "answer"))
        await call_next(message)

    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            server.in_memory(), era="stateless", middlewares=middlewares
        ) as client:
            stack = client.session._recv_stack
            route = client._listeners.route
            assert list(stack) == [watch]
            async with client.listen(tools=True) as tools:
                assert list(stack) == [route, watch]
                async with client.listen(prompts=True):
                    assert list(stack) == [route, watch]

                @server.tool()
                async def second() -> str:
                    return "2"

                note = await tools.__anext__()
                assert note.method == "notifications/tools/list_changed"
                assert list(stack) == [route, watch]  # one is still open
            await trio.testing.wait_all_tasks_blocked()
            assert list(stack) == [watch]
            seen.clear()
            assert (await client.call_tool("second")).content[0] == trimcp.TextContent(text="2")
            assert seen == ["answer"]  # the user's middleware still sees every message

"""``subscriptions/listen`` on a shared channel (stdio-like, over memory)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from trimcp.wire import Notification, Request

from ._support import RawPeer, demo_server, error_of, params, result_of, served

SUB = "io.modelcontextprotocol/subscriptionId"


async def _dynamic() -> str:
    return "dynamic"


async def listen(peer: RawPeer, id: str, **wanted: Any) -> dict[str, Any]:
    """Open a subscription; return its acknowledgement's params."""
    await peer.send(
        Request(id=id, method="subscriptions/listen", params=params({"notifications": wanted}))
    )
    ack = await peer.receive()
    assert isinstance(ack, Notification), ack
    assert ack.method == "notifications/subscriptions/acknowledged"
    assert ack.params is not None
    assert ack.params["_meta"][SUB] == id
    return ack.params


async def next_note(peer: RawPeer) -> Notification:
    message = await peer.receive()
    assert isinstance(message, Notification), message
    return message


async def test_acknowledged_first_with_the_honoured_filter_then_tagged_changes() -> None:
    server = demo_server()
    async with served(server) as (peer, checker):
        ack = await listen(
            peer,
            "s1",
            toolsListChanged=True,
            promptsListChanged=True,
            resourcesListChanged=True,
            resourceSubscriptions=["demo://static", "demo://static"],
            unknownKind=True,
        )
        assert ack["notifications"] == {
            "toolsListChanged": True,
            "promptsListChanged": True,
            "resourcesListChanged": True,
            "resourceSubscriptions": ["demo://static"],
        }
        server.tool(name="dynamic")(_dynamic)
        server.notify_resource_updated("demo://static")
        server.notify_resource_updated("demo://other")  # not subscribed: not sent
        server.remove_prompt("guided")
        notes = [await next_note(peer) for _ in range(3)]
        assert [n.method for n in notes] == [
            "notifications/tools/list_changed",
            "notifications/resources/updated",
            "notifications/prompts/list_changed",
        ]
        assert all(n.params is not None and n.params["_meta"][SUB] == "s1" for n in notes)
        assert notes[1].params is not None
        assert notes[1].params["uri"] == "demo://static"
        # Other requests are served while the subscription is open.
        assert result_of(await peer.call(2, "tools/list", params()))["resultType"] == "complete"
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": "s1"}))
        await trio.testing.wait_all_tasks_blocked()
        assert len(server.subscriptions) == 0
        server.tool(name="dynamic2")(_dynamic)
        await trio.testing.wait_all_tasks_blocked()
        # Cancelled: neither a response nor another notification for it.
        assert peer.receive_channel.statistics().current_buffer_used == 0
    seen = checker.validate()
    assert seen["SubscriptionsAcknowledgedNotification"] == 1
    assert seen["ToolListChangedNotification"] == 1
    assert seen["ResourceUpdatedNotification"] == 1


async def test_each_subscription_gets_only_what_it_asked_for() -> None:
    server = demo_server()
    async with served(server) as (peer, checker):
        await listen(peer, "prompts", promptsListChanged=True)
        await listen(peer, "tools", toolsListChanged=True)
        server.tool(name="dynamic")(_dynamic)
        server.prompt(name="p2")(_dynamic)
        notes = [await next_note(peer) for _ in range(2)]
        by_sub = {n.params["_meta"][SUB]: n.method for n in notes if n.params}
        assert by_sub == {
            "tools": "notifications/tools/list_changed",
            "prompts": "notifications/prompts/list_changed",
        }
        server.subscriptions.end_all()
        ends = [await peer.receive() for _ in range(2)]
        ended = {result_of(end)["_meta"][SUB] for end in ends}  # type: ignore[arg-type]
        assert ended == {"tools", "prompts"}
    assert checker.validate()["SubscriptionsListenResult"] == 2


async def test_listener_bound_and_bad_filters() -> None:
    server = demo_server(max_subscriptions=1)
    async with served(server) as (peer, checker):
        await listen(peer, "one", toolsListChanged=True)
        over = await peer.call("two", "subscriptions/listen", params({"notifications": {}}))
        no_filter = await peer.call("three", "subscriptions/listen", params())
        server.subscriptions.end_all()
        await peer.answer("one")
        bad_uris = await peer.call(
            "four",
            "subscriptions/listen",
            params({"notifications": {"resourceSubscriptions": "x"}}),
        )
    assert error_of(over)[0] == -32600
    assert error_of(no_filter)[0] == -32602
    assert error_of(bad_uris)[0] == -32602
    checker.validate()


async def test_a_server_without_the_capability_acknowledges_nothing() -> None:
    import trimcp

    bare = trimcp.Server("bare")
    async with served(bare) as (peer, _):
        ack = await listen(peer, "s", toolsListChanged=True, resourceSubscriptions=["x://y"])
        assert ack["notifications"] == {}
        await peer.send(Notification(method="notifications/cancelled", params={"requestId": "s"}))

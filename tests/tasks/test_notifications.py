"""Status notifications: notifications/tasks on subscriptions/listen streams that asked."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from trimcp.dispatch import Middlewares
from trimcp.wire import Message, Notification

from ._support import WITHOUT_TASKS, connected, error_of, task_server

SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


async def test_listeners_get_the_status_of_the_tasks_they_asked_for(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server, recorder, probe = task_server()
    heard: list[Notification] = []

    async def listen_in(message: Message, call_next: Any) -> None:
        if isinstance(message, Notification):
            heard.append(message)
        await call_next(message)

    middlewares = Middlewares()
    middlewares.client_recv.add(listen_in)
    async with connected(server, middlewares=middlewares) as (_client, send):
        watched = await send("tools/call", {"name": "gated", "arguments": {"name": "w"}})
        other = await send("tools/call", {"name": "gated", "arguments": {"name": "o"}})
        async with trio.open_nursery() as nursery:
            ids = [watched["taskId"], "not-a-task"]
            nursery.start_soon(send, "subscriptions/listen", {"notifications": {"taskIds": ids}})
            await trio.testing.wait_all_tasks_blocked()
            (ack,) = heard
            assert ack.method == "notifications/subscriptions/acknowledged"
            assert ack.params is not None
            assert ack.params["notifications"] == {"taskIds": [watched["taskId"]]}
            probe.go.set()
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
        updates = [m for m in heard if m.method == "notifications/tasks"]
        assert [u.params["taskId"] for u in updates if u.params] == [watched["taskId"]]
        (update,) = updates
        assert update.params is not None
        assert update.params["status"] == "completed"
        assert update.params["result"]["content"][0]["text"] == "Hello, w!"
        assert update.params["_meta"][SUBSCRIPTION] is not None
        assert other["taskId"] not in str(heard)
        # asking for task notifications without the extension is refused
        refused = await error_of(
            send(
                "subscriptions/listen",
                {"notifications": {"taskIds": [watched["taskId"]]}},
                caps=WITHOUT_TASKS,
            )
        )
        assert refused.code == -32021
    assert recorder.validate()["TaskStatusNotification"] == 1

"""Property: a task's life depends only on the serving that carried its request
(design invariant 13).

Random scripts connect and disconnect up to four in-memory clients of one server, in
any interleaving, and have them create tasks of both kinds (stateless-era extension
tasks and 2025-11-25 core tasks) on a tool that runs until cancelled. After every step:
exactly the tasks of the clients still connected are running, and each of those clients
still finds each of its tasks ``working``. A task never ends because another client
came or went.
"""

from __future__ import annotations

import os
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp

EXT = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
}
EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "30"))

Step = tuple[str, int]
OPS = ["connect", "connect", "disconnect", "core", "extension", "extension"]
steps = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 3)), min_size=4, max_size=24)


class Connected:
    def __init__(self, client: trimcp.Client, stop: trio.Event, gone: trio.Event) -> None:
        self.client = client
        self.stop = stop
        self.gone = gone
        #: (kind, task id, tag) of the tasks this client created.
        self.tasks: list[tuple[str, str, str]] = []


async def _play(script: list[Step]) -> None:
    server = trimcp.Server("owners", version="1")
    running: set[str] = set()

    @server.tool(task_support="optional")
    async def hold(tag: str) -> str:
        running.add(tag)
        try:
            await trio.sleep_forever()
        finally:
            running.discard(tag)
        return tag

    clients: dict[int, Connected] = {}
    made = 0

    async def serve_client(*, task_status: Any) -> None:
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            stop, gone = trio.Event(), trio.Event()
            task_status.started(Connected(client, stop, gone))
            try:
                await stop.wait()
            finally:
                gone.set()

    async with trio.open_nursery() as nursery:
        for op, who in script:
            connected = clients.get(who)
            if op == "connect" and connected is None:
                clients[who] = await nursery.start(serve_client)
            elif op == "disconnect" and connected is not None:
                connected.stop.set()
                await connected.gone.wait()
                del clients[who]
            elif op in ("core", "extension") and connected is not None:
                made += 1
                tag = f"{who}-{made}"
                arguments = {"tag": tag}
                if op == "core":
                    task = await connected.client.tasks.call_tool("hold", arguments)
                    connected.tasks.append((op, task.task_id, tag))
                else:
                    created = await connected.client.request(
                        "tools/call", {"name": "hold", "arguments": arguments, "_meta": META}
                    )
                    connected.tasks.append((op, created["taskId"], tag))
            await trio.testing.wait_all_tasks_blocked()
            expected = {tag for c in clients.values() for _, _, tag in c.tasks}
            assert running == expected
            for connected in clients.values():
                for kind, task_id, _tag in connected.tasks:
                    if kind == "core":
                        status = (await connected.client.tasks.get(task_id)).status
                    else:
                        state = await connected.client.request(
                            "tasks/get", {"taskId": task_id, "_meta": META}
                        )
                        status = state["status"]
                    assert status == "working"
        for connected in clients.values():
            connected.stop.set()
    assert running == set()
    assert len(server.tasks) == 0


@settings(max_examples=EXAMPLES, deadline=None)
@given(script=steps)
def test_tasks_end_only_with_the_serving_that_carried_them(script: list[Step]) -> None:
    trio.run(_play, script, clock=trio.testing.MockClock(autojump_threshold=0))

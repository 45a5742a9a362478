"""The raw floor: NDJSON over Trio memory channels, no MCP at all.

The client writes each request as one ``json.dumps`` line into a memory channel; a
dispatcher task ``json.loads`` each line and spawns a task per request, which answers
with a ``json.dumps`` line on the return channel; a client reader task decodes answers
and wakes the waiting caller by id. This is the least any Trio MCP engine must do per
call (plus encoding, which trimcp's memory transport skips), so it bounds from above
what trimcp can reach.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from benchmarks.core import TOOL_NAME, Caller, Implementation, Workload, check_echo
from benchmarks.runtimes import trio_runtime

#: Lines buffered per direction (the same as trimcp's memory pair).
BUFFER = 32


class _Waiter:
    __slots__ = ("answer", "event")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.answer: dict[str, Any] = {}


class InMemoryDriver:
    """The floor over Trio memory channels carrying newline-delimited JSON."""

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Caller]:
        dumps, loads = json.dumps, json.loads
        to_server, server_inbox = trio.open_memory_channel[str](BUFFER)
        to_client, client_inbox = trio.open_memory_channel[str](BUFFER)
        waiters: dict[int, _Waiter] = {}
        ids = itertools.count(1)

        async def answer(request: dict[str, Any]) -> None:
            text = request["params"]["arguments"]["text"]
            result = {"content": [{"type": "text", "text": text}]}
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
            await to_client.send(dumps(reply) + "\n")

        async def dispatcher(nursery: trio.Nursery) -> None:
            async for line in server_inbox:
                nursery.start_soon(answer, loads(line))

        async def reader() -> None:
            async for line in client_inbox:
                message = loads(line)
                waiter = waiters.pop(message["id"])
                waiter.answer = message
                waiter.event.set()

        text = workload.text
        arguments = {"text": text}

        def encode_request(request_id: int) -> str:
            request = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": TOOL_NAME, "arguments": arguments},
            }
            return dumps(request) + "\n"

        async def exchange() -> dict[str, Any]:
            request_id = next(ids)
            waiter = waiters[request_id] = _Waiter()
            await to_server.send(encode_request(request_id))
            await waiter.event.wait()
            return waiter.answer

        async def call() -> None:
            request_id = next(ids)
            waiter = waiters[request_id] = _Waiter()
            await to_server.send(encode_request(request_id))
            await waiter.event.wait()
            if "result" not in waiter.answer:
                raise AssertionError("call failed")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(dispatcher, nursery)
            nursery.start_soon(reader)
            check_echo((await exchange())["result"]["content"][0]["text"], text)
            try:
                yield call
            finally:
                nursery.cancel_scope.cancel()


IMPLEMENTATION = Implementation(
    name="floor",
    description="raw floor: NDJSON over Trio memory channels, task per request, no MCP",
    runtime=trio_runtime(),
    drivers={"memory": InMemoryDriver},
    versions={"trio": trio.__version__},
)

"""The raw floor's server: JSON-RPC lines to a nursery dispatcher, no MCP at all.

A dispatcher decodes each line and spawns a task per request, in a cancel scope of its
own so that ``notifications/cancelled`` can reach it; the task answers with one line.
It knows ``initialize`` (answered as is), ``ping`` and ``tools/call`` of the benchmark
tools (``echo``, ``park``, ``bench_stats``, and ``fanout``, whose reverse calls go out
as lines and are matched by id). This is the least any Trio MCP server must do per
call, so it bounds what trimcp can reach. The same core serves memory channels, stdio
(:func:`serve_floor_stdio`), WebSocket (:mod:`._ws`) and Streamable HTTP
(:mod:`._floor_http`: a bare h11 server, and an ASGI app under hypercorn; a JSON body
per answer, no reverse calls).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import trio

from ._codec import LINES, Codec
from ._core import FANOUT_TOOL, PARK_TOOL, STATS_TOOL, TOOL_NAME
from ._ndjson import BUFFER, lines_of, writer
from ._probe import Probe, trio_tasks

__all__ = ["ClientGone", "FloorServer", "serve_floor_stdio"]

#: What the park tool waits on besides its cancellation: it returns when the client has
#: gone (over HTTP under hypercorn; elsewhere it never returns).
Park = Callable[[], Awaitable[object]]


class ClientGone(Exception):
    """A parked call's client went away (its ``park`` returned): the call is over."""


class FloorServer:
    """The floor's dispatcher; ``send(line)`` writes one answer or reverse call, each
    message encoded (and read) by ``codec``: JSON lines, or with :data:`._codec.OBJECTS`
    the dicts themselves."""

    def __init__(
        self, send: Callable[[Any], Awaitable[None]] | None = None, codec: Codec = LINES
    ) -> None:
        self.send = send
        self.codec = codec
        self.probe = Probe(trio_tasks)
        self.scopes: dict[Any, trio.CancelScope] = {}
        self.reverse: dict[int, trio.Event] = {}
        self.ids = itertools.count(1)

    async def serve(self, lines: AsyncIterator[Any]) -> None:
        """Dispatch every line until the input ends."""
        loads = self.codec.loads
        async with trio.open_nursery() as nursery:
            async for line in lines:
                message = loads(line)
                if "method" in message and "id" in message:
                    nursery.start_soon(self.answer, message)
                else:
                    self.received(message)
            nursery.cancel_scope.cancel()

    def received(self, message: dict[str, Any]) -> None:
        """Take a message that needs no answer: a notification (``notifications/cancelled``
        cancels its request's scope) or the answer to a reverse call (wakes its caller)."""
        if "method" not in message:
            event = self.reverse.pop(message.get("id", 0), None)
            if event is not None:
                event.set()
        elif message["method"] == "notifications/cancelled":
            scope = self.scopes.get(message["params"]["requestId"])
            if scope is not None:
                scope.cancel()

    async def answer(self, message: dict[str, Any]) -> None:
        assert self.send is not None
        reply = await self.handle(message)
        if reply is not None:
            await self.send(self.codec.dumps(reply))

    async def handle(
        self, message: dict[str, Any], park: Park = trio.sleep_forever
    ) -> dict[str, Any] | None:
        """The reply to one request, or ``None`` when it was cancelled.

        ``park``: what the park tool waits on besides its cancellation; when it returns
        (over HTTP: the client has gone), the call ends as cancelled.
        """
        request_id = message["id"]
        with trio.CancelScope() as scope:
            self.scopes[request_id] = scope
            try:
                result = await self._result(message["method"], message.get("params") or {}, park)
            except ClientGone:
                return None
            finally:
                del self.scopes[request_id]
        if scope.cancelled_caught:
            return None
        if result is None:
            error = {"code": -32601, "message": "method not found"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _result(
        self, method: str, params: dict[str, Any], park: Park
    ) -> dict[str, Any] | None:
        if method == "tools/call":
            text = await self._tool(params["name"], params.get("arguments") or {}, park)
            return {"content": [{"type": "text", "text": text}]}
        if method == "initialize":
            return {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "1.0"},
            }
        return {} if method == "ping" else None

    async def _tool(self, name: str, arguments: dict[str, Any], park: Park) -> str:
        if name == TOOL_NAME:
            return str(arguments["text"])
        if name == STATS_TOOL:
            return json.dumps(self.probe.snapshot(arguments.get("tasks", True) is not False))
        if name == PARK_TOOL:
            self.probe.enter()
            try:
                await park()
                self.probe.observed_cancel()  # the client left: its cancellation
                raise ClientGone
            except trio.Cancelled:
                self.probe.observed_cancel()
                raise
            finally:
                self.probe.leave()
        if name == FANOUT_TOOL:
            async with trio.open_nursery() as nursery:
                for _ in range(int(arguments["n"])):
                    nursery.start_soon(self._sample)
            return "done"
        raise ValueError(f"no tool {name}")

    async def _sample(self) -> None:
        if self.send is None:
            raise RuntimeError("no reverse calls on this transport")
        request_id = next(self.ids)
        event = self.reverse[request_id] = trio.Event()
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
        request = {"method": "sampling/createMessage", "params": {**params, "maxTokens": 1}}
        await self.send(self.codec.dumps({"jsonrpc": "2.0", "id": request_id, **request}))
        await event.wait()


async def serve_floor_stdio() -> None:
    """Serve the floor on this process's stdin and stdout until stdin closes."""
    stdin, stdout = trio.lowlevel.FdStream(0), trio.lowlevel.FdStream(1)
    outbox, queued = trio.open_memory_channel[str](BUFFER)
    server = FloorServer(outbox.send)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer, stdout, queued)
        await server.serve(lines_of(stdin))
        nursery.cancel_scope.cancel()

"""The raw floor's server: JSON-RPC lines to a nursery dispatcher, no MCP at all.

A dispatcher decodes each line and spawns a task per request, in a cancel scope of its
own so that ``notifications/cancelled`` can reach it; the task answers with one line.
It knows ``initialize`` (answered as is), ``ping`` and ``tools/call`` of the benchmark
tools (``echo``, ``park``, ``bench_stats``, and ``fanout``, whose reverse calls go out
as lines and are matched by id). This is the least any Trio MCP server must do per
call, so it bounds what trimcp can reach. The same core serves memory channels, stdio
(:func:`serve_floor_stdio`) and HTTP (:func:`serve_floor_http`: a bare h11 server,
one request at a time per connection, each answered with a JSON body; no reverse calls).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import h11
import trio

from ._codec import LINES, Codec
from ._core import FANOUT_TOOL, PARK_TOOL, STATS_TOOL, TOOL_NAME
from ._ndjson import BUFFER, lines_of, writer
from ._probe import Probe, trio_tasks

__all__ = ["FloorServer", "serve_floor_http", "serve_floor_stdio"]


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
                if "method" not in message:
                    event = self.reverse.pop(message.get("id"), None)
                    if event is not None:
                        event.set()
                elif "id" in message:
                    nursery.start_soon(self.answer, message)
                else:
                    self.notified(message)
            nursery.cancel_scope.cancel()

    def notified(self, message: dict[str, Any]) -> None:
        if message["method"] == "notifications/cancelled":
            scope = self.scopes.get(message["params"]["requestId"])
            if scope is not None:
                scope.cancel()

    async def answer(self, message: dict[str, Any]) -> None:
        assert self.send is not None
        reply = await self.handle(message)
        if reply is not None:
            await self.send(self.codec.dumps(reply))

    async def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The reply to one request, or ``None`` when it was cancelled."""
        request_id = message["id"]
        with trio.CancelScope() as scope:
            self.scopes[request_id] = scope
            try:
                result = await self._result(message["method"], message.get("params") or {})
            finally:
                del self.scopes[request_id]
        if scope.cancelled_caught:
            return None
        if result is None:
            error = {"code": -32601, "message": "method not found"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _result(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "tools/call":
            text = await self._tool(params["name"], params.get("arguments") or {})
            return {"content": [{"type": "text", "text": text}]}
        if method == "initialize":
            return {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "1.0"},
            }
        return {} if method == "ping" else None

    async def _tool(self, name: str, arguments: dict[str, Any]) -> str:
        if name == TOOL_NAME:
            return str(arguments["text"])
        if name == STATS_TOOL:
            return json.dumps(self.probe.snapshot())
        if name == PARK_TOOL:
            self.probe.enter()
            try:
                await trio.sleep_forever()
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


async def serve_floor_http(*, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """A bare h11 server on 127.0.0.1 (a free port, reported): one POST, one answer."""
    server = FloorServer()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1", backlog=4096)
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(lambda stream: _connection(server, stream), listeners)


async def _connection(server: FloorServer, stream: Any) -> None:
    conn = h11.Connection(h11.SERVER)
    body: list[bytes] = []
    async with stream:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = bytes(await stream.receive_some(65536))
                conn.receive_data(data)
                if not data and conn.their_state is not h11.DONE:
                    return
            elif isinstance(event, h11.Data):
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                answer = await _answer(server, b"".join(body))
                body = []
                if answer is None:
                    return
                await stream.send_all(answer(conn))
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
            elif isinstance(event, h11.ConnectionClosed):
                return


async def _answer(server: FloorServer, body: bytes) -> Callable[[h11.Connection], bytes] | None:
    message = json.loads(body)
    if "id" not in message:
        server.notified(message)
        status, data = 202, b""
    else:
        reply = await server.handle(message)
        if reply is None:
            return None
        status, data = 200, json.dumps(reply).encode()

    def render(conn: h11.Connection) -> bytes:
        headers = [("content-type", "application/json"), ("content-length", str(len(data)))]
        if message.get("method") == "initialize":
            headers.append(("mcp-session-id", "floor"))
        response = h11.Response(status_code=status, headers=headers)
        return (
            (conn.send(response) or b"")
            + (conn.send(h11.Data(data=data)) or b"")
            + (conn.send(h11.EndOfMessage()) or b"")
        )

    return render

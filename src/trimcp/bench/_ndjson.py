"""A lean JSON-RPC client over newline-delimited JSON: the floor's client, and the
raw client that drives any stdio MCP server (ours, the SDK's, an external command).

It does what any MCP client must and nothing more: ``initialize`` and
``notifications/initialized``, one line per request, answers matched by id in a
reader task that wakes the caller's :class:`trio.Event`, ``notifications/cancelled``
when a waiting caller is cancelled (shielded, like every MCP client must), and
answers to the server's own requests (``sampling/createMessage`` gets a fixed
completion, ``ping`` an empty result, anything else -32601).

In the stateless era (``era="stateless"``) it sends no ``initialize``, stamps every
request's ``params._meta`` (:func:`._era.stamp`), still sends ``notifications/cancelled``
for a cancelled caller (the 2026-07-28 stdio transport requires it), and answers the
fan-out's ``input_required`` rounds (:func:`._era.with_input_rounds`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import trio

from ._codec import LINES, Codec
from ._core import FANOUT_TOOL, PARK_TOOL, STATS_TOOL, Target, Workload, check_echo
from ._era import SAMPLING_ANSWER, stamp, with_input_rounds

__all__ = [
    "PROTOCOL_VERSION",
    "SAMPLING_ANSWER",
    "LineClient",
    "ServerGone",
    "lines_of",
    "raw_target",
    "writer",
]

PROTOCOL_VERSION = "2025-06-18"
#: Lines buffered towards a writer task.
BUFFER = 32


class ServerGone(RuntimeError):
    """The server stopped answering: its output ended (it exited, most likely)."""


class _Waiter:
    __slots__ = ("answer", "event")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.answer: dict[str, Any] = {}


class LineClient:
    """Requests over ``send(line)``; :meth:`read` consumes the answer lines."""

    def __init__(
        self, send: Callable[[Any], Awaitable[None]], era: str = "handshake", codec: Codec = LINES
    ) -> None:
        self.send = send
        self.codec = codec
        self.stateless = era == "stateless"
        self.waiters: dict[int, _Waiter] = {}
        self.ids = itertools.count(1)
        #: Why the server can answer no more (set once its output ended).
        self.gone: str | None = None

    def close(self, why: str) -> None:
        """The server is gone: every waiting caller, and every later one, raises
        :class:`ServerGone` with ``why`` instead of waiting for ever."""
        if self.gone is None:
            self.gone = why
        for waiter in self.waiters.values():
            waiter.event.set()
        self.waiters.clear()

    async def read(
        self, lines: AsyncIterator[Any], why_ended: Callable[[], Awaitable[str]] | None = None
    ) -> None:
        """Route every line read: answers to their caller, requests to :meth:`_reply`.
        When the lines end, the waiting callers fail (:meth:`close`) with what
        ``why_ended()`` says (default: the server closed its output)."""
        try:
            await self._route(lines)
        finally:
            why = "the server closed its output"
            if why_ended is not None:
                with trio.CancelScope(shield=True):
                    why = await why_ended()
            self.close(why)

    async def _route(self, lines: AsyncIterator[Any]) -> None:
        loads, waiters = self.codec.loads, self.waiters
        async for line in lines:
            message = loads(line)
            if "method" in message:
                if "id" in message:
                    await self._reply(message)
                continue
            waiter = waiters.pop(message["id"], None)
            if waiter is not None:
                waiter.answer = message
                waiter.event.set()

    async def _reply(self, message: dict[str, Any]) -> None:
        method = message["method"]
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "sampling/createMessage":
            reply["result"] = SAMPLING_ANSWER
        elif method == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": f"no {method}"}
        await self.send(self.codec.dumps(reply))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; on cancellation, tell the server before giving up."""
        if self.gone is not None:
            raise ServerGone(self.gone)
        request_id = next(self.ids)
        waiter = self.waiters[request_id] = _Waiter()
        if self.stateless:
            params = stamp(params)
        line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.send(self.codec.dumps(line))
        try:
            await waiter.event.wait()
        except trio.Cancelled:
            self.waiters.pop(request_id, None)
            note = {"method": "notifications/cancelled", "params": {"requestId": request_id}}
            with trio.CancelScope(shield=True):
                await self.send(self.codec.dumps({"jsonrpc": "2.0", **note}))
            raise
        if not waiter.answer:
            raise ServerGone(f"{self.gone} before answering {method}")
        return waiter.answer

    async def initialize(self) -> None:
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "trimcp-bench", "version": "1.0"},
        }
        answer = await self.request("initialize", params)
        if "result" not in answer:
            raise AssertionError(f"initialize failed: {answer}")
        await self.send(self.codec.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    async def target(self, workload: Workload, *, ours: bool) -> Target:
        """The target over this client; ``ours``: the server has the benchmark tools."""
        return await raw_target(self.request, workload, ours=ours, fanout=True)


Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


async def raw_target(request: Request, workload: Workload, *, ours: bool, fanout: bool) -> Target:
    """The target over a raw client's ``request(method, params)`` (answers as JSON-RPC
    dicts): one checked first call, then ``call``; with ``ours`` (the server has the
    benchmark tools) also park and stats, and with ``fanout`` the fan-out (its input
    rounds answered by :func:`._era.with_input_rounds`)."""
    tool, arguments = workload.tool, workload.call_arguments()
    params = {"name": tool, "arguments": arguments}
    first = await request("tools/call", params)
    if "result" not in first or first["result"].get("isError"):
        hint = "" if ours else "; pass --tool NAME and --arguments JSON for a tool it has"
        raise AssertionError(f"the first call of tool {tool!r} failed: {str(first)[:200]}{hint}")
    if workload.arguments is None and tool == "echo":
        check_echo(first["result"]["content"][0].get("text"), workload.text)

    async def call() -> None:
        answer = await request("tools/call", params)
        if "result" not in answer or answer["result"].get("isError"):
            raise AssertionError(f"call failed: {str(answer)[:200]}")

    if not ours:
        return Target(call)

    async def park() -> None:
        await request("tools/call", {"name": PARK_TOOL, "arguments": {}})

    async def stats(tasks: bool = True) -> dict[str, Any]:
        params = {"name": STATS_TOOL, "arguments": {"tasks": tasks}}
        answer = await request("tools/call", params)
        result: dict[str, Any] = json.loads(answer["result"]["content"][0]["text"])
        return result

    if not fanout:
        return Target(call, park, stats)

    async def fan_out(n: int) -> None:
        params = {"name": FANOUT_TOOL, "arguments": {"n": n}}
        answer = await with_input_rounds(request, "tools/call", params)
        if "result" not in answer or answer["result"].get("isError"):
            raise AssertionError(f"fanout failed: {str(answer)[:200]}")

    return Target(call, park, stats, fan_out)


async def lines_of(stream: trio.abc.ReceiveStream) -> AsyncIterator[str]:
    """The lines of a byte stream, as text."""
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        if b"\n" not in buffer:
            continue
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                yield line.decode()


async def writer(stream: trio.abc.SendStream, outbox: trio.MemoryReceiveChannel[str]) -> None:
    """Write queued lines, batching what is already queued into one write."""
    async for line in outbox:
        parts = [line]
        while len(parts) < 256:
            try:
                parts.append(outbox.receive_nowait())
            except trio.WouldBlock:
                break
        await stream.send_all("".join(parts).encode())

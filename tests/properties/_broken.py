"""Deliberately broken MCP servers, each breaking one property, for mutation tests.

:class:`BrokenTarget` serves a tiny hand-written MCP server over NDJSON on memory
streams (virtual clock). Without a defect it conforms; each defect name makes it break
exactly one protocol rule, so a test can prove that the matching check fires.
"""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing

from trimcp.testing._inbox import Inbox
from trimcp.testing._stream_targets import _MemoryConnection, _read_lines

DEFECTS = (
    "cross-ids",
    "double-response",
    "silent",
    "crash-on-bad-json",
    "wrong-code",
    "invalid-result",
    "early-notification",
    "undeclared-logging",
    "sampling-without-capability",
    "endless-cursor",
    "progress-decreases",
    "ignores-cancel",
    "no-exit",
)
TOOL = {"name": "work", "description": "works", "inputSchema": {"type": "object"}}


class BrokenServer:
    def __init__(self, defect: str | None) -> None:
        self.defect = defect
        self.running: dict[Any, Any] = {}  # call id -> progress token (ignores-cancel)
        self.step = 10
        self.waiting: Any = None  # the call waiting for its sampling answer

    async def serve(self, stream: Any, done: trio.Event) -> None:
        buffer = b""
        try:
            while True:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    if self.defect == "no-exit":
                        await trio.sleep_forever()
                    return
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if not await self.line(stream, line):
                        return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return  # the peer hung up
        finally:
            done.set()

    async def write(self, stream: Any, message: dict[str, Any]) -> None:
        await stream.send_all(json.dumps(message).encode() + b"\n")

    async def line(self, stream: Any, line: bytes) -> bool:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            if self.defect == "crash-on-bad-json":
                await stream.aclose()
                return False
            await self.write(
                stream,
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}},
            )
            return True
        if isinstance(message, dict) and "method" in message and not self.well_formed(message):
            error = {"code": -32600, "message": "invalid"}
            await self.write(stream, {"jsonrpc": "2.0", "id": None, "error": error})
            return True
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if isinstance(message, dict) and ("result" in message or "error" in message):
                if message.get("id") == "s1" and self.waiting is not None:
                    # The sampling answer came: finish the call that asked for it.
                    call, self.waiting = self.waiting, None
                    await self.reply(stream, call, {"content": [{"type": "text", "text": "ok"}]})
                return True
            error = {"code": -32600, "message": "invalid"}
            await self.write(stream, {"jsonrpc": "2.0", "id": None, "error": error})
            return True
        if "id" not in message:
            await self.notification(stream, message)
            return True
        await self.request(stream, message)
        return True

    @staticmethod
    def well_formed(message: dict[str, Any]) -> bool:
        request_id = message.get("id", 0)
        good_id = isinstance(request_id, str | int) and not isinstance(request_id, bool)
        params_ok = isinstance(message.get("params", {}), dict)
        return message.get("jsonrpc") == "2.0" and good_id and params_ok

    async def notification(self, stream: Any, message: dict[str, Any]) -> None:
        if message["method"] == "notifications/cancelled":
            request_id = message.get("params", {}).get("requestId")
            if self.defect != "ignores-cancel":
                self.running.pop(request_id, None)

    async def reply(self, stream: Any, request_id: Any, result: Any) -> None:
        if self.defect == "cross-ids" and result.get("tools") is None and "content" in result:
            request_id = f"{request_id}-other"
        await self.write(stream, {"jsonrpc": "2.0", "id": request_id, "result": result})
        if self.defect == "double-response" and "content" in result:
            await self.write(stream, {"jsonrpc": "2.0", "id": request_id, "result": result})

    async def request(self, stream: Any, message: dict[str, Any]) -> None:
        method, request_id = message["method"], message["id"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        # Progress the ignored cancellations keep making, one per request that arrives.
        for token in list(self.running.values()):
            self.step += 1
            await self.progress(stream, token, self.step)
        if method == "initialize":
            capabilities: dict[str, Any] = {"tools": {"listChanged": True}}
            if self.defect == "early-notification":
                await self.write(
                    stream, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                )
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": capabilities,
                "serverInfo": {"name": "broken", "version": "0"},
            }
            await self.reply(stream, request_id, result)
        elif method == "ping":
            await self.reply(stream, request_id, {})
        elif method == "tools/list":
            page: dict[str, Any] = {"tools": [TOOL]}
            if self.defect == "endless-cursor":
                page["nextCursor"] = "again"
            if self.defect == "invalid-result":
                page = {"tools": [{"description": "no name"}]}
            await self.reply(stream, request_id, page)
        elif method == "tools/call":
            await self.call(stream, request_id, params)
        else:
            code = -32603 if self.defect == "wrong-code" else -32601
            error = {"code": code, "message": "no such method"}
            await self.write(stream, {"jsonrpc": "2.0", "id": request_id, "error": error})

    async def progress(self, stream: Any, token: Any, value: float) -> None:
        params = {"progressToken": token, "progress": value}
        await self.write(
            stream, {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
        )

    async def call(self, stream: Any, request_id: Any, params: dict[str, Any]) -> None:
        token = (params.get("_meta") or {}).get("progressToken")
        if self.defect == "silent":
            return
        if self.defect == "undeclared-logging":
            note = {"level": "info", "data": "hello"}
            await self.write(
                stream, {"jsonrpc": "2.0", "method": "notifications/message", "params": note}
            )
        if self.defect == "sampling-without-capability":
            sampling = {"messages": [], "maxTokens": 5}
            await self.write(
                stream,
                {
                    "jsonrpc": "2.0",
                    "id": "s1",
                    "method": "sampling/createMessage",
                    "params": sampling,
                },
            )
            self.waiting = request_id
            return  # answered once the peer answers the sampling request
        if token is not None:
            values = [3, 2, 1] if self.defect == "progress-decreases" else [1, 2, 3]
            for value in values:
                await self.progress(stream, token, value)
            if self.defect == "ignores-cancel":
                self.running[request_id] = token
                return  # keeps "working": progress on every later request, no answer
        await self.reply(stream, request_id, {"content": [{"type": "text", "text": "ok"}]})


class BrokenTarget:
    """A :class:`trimcp.testing.Target` serving :class:`BrokenServer` with ``defect``."""

    clock = "mock"

    def __init__(self, defect: str | None) -> None:
        self.defect = defect

    def describe(self) -> str:
        return f"broken server ({self.defect})"

    async def connect(self, nursery: trio.Nursery) -> _MemoryConnection:
        ours, theirs = trio.testing.memory_stream_pair()
        connection = _MemoryConnection(ours)
        nursery.start_soon(BrokenServer(self.defect).serve, theirs, connection.served)
        nursery.start_soon(_read_lines, ours, connection.inbox, connection.state)
        return connection


__all__ = ["DEFECTS", "BrokenTarget", "Inbox"]

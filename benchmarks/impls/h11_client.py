"""A lean Streamable HTTP client (h11 over Trio sockets) driving either server.

It does what any MCP client over HTTP must and nothing more: one ``initialize`` and
``notifications/initialized`` per run, then each ``tools/call`` as one keep-alive
``POST`` carrying the session id, its answer read as JSON or as an SSE stream
(whichever the server chose) and matched by id. Each concurrent caller has a
connection of its own (opened on first use, kept for the run unless the server closes
it, then replaced), so the client never queues. With the client this thin,
``h11-trimcp`` against ``h11-sdk`` compares the servers; against ``trimcp`` / ``sdk``
it shows what each stack's own client costs.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any
from urllib.parse import urlsplit

import h11
import trio

from benchmarks.core import TOOL_NAME, Caller, Implementation, Workload, check_echo
from benchmarks.impls.http_process import PeerCpu, http_server
from benchmarks.runtimes import trio_runtime

PROTOCOL_VERSION = "2025-06-18"


class _Connection:
    """One keep-alive HTTP/1.1 connection, one exchange at a time."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT)
        self.reusable = True

    async def post(
        self, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[h11.Response, bytes]:
        conn = self.h11
        request = h11.Request(
            method="POST",
            target=target,
            headers=[*headers, ("content-length", str(len(body)))],
        )
        await self.stream.send_all(
            conn.send(request) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        response: h11.Response | None = None
        chunks: list[bytes] = []
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("server closed the connection mid-answer")
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
        else:  # the server closes it (Hypercorn does every 1000 requests by default)
            self.reusable = False
        assert response is not None
        return response, b"".join(chunks)


def _answer(response: h11.Response, body: bytes, request_id: int) -> dict[str, Any]:
    """The JSON-RPC answer to ``request_id`` in a JSON or SSE body."""
    if response.status_code != 200:
        raise AssertionError(f"HTTP {response.status_code}: {body[:200]!r}")
    kind = next((v for k, v in response.headers if k == b"content-type"), b"")
    if kind.startswith(b"application/json"):
        message: dict[str, Any] = json.loads(body)
        return message
    for line in body.split(b"\n"):
        if line.startswith(b"data:"):
            message = json.loads(line[5:])
            if message.get("id") == request_id:
                return message
    raise AssertionError(f"no answer to {request_id} in {body[:200]!r}")


class HttpDriver(PeerCpu):
    """The h11 client against the ``kind`` server in its own process."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    @asynccontextmanager
    async def connect(self, workload: Workload) -> AsyncIterator[Caller]:
        with http_server(self.kind, workload) as self.server:
            parts = urlsplit(self.server.url)
            host, port, target = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
            headers = [
                ("host", f"{host}:{port}"),
                ("accept", "application/json, text/event-stream"),
                ("content-type", "application/json"),
            ]
            idle: list[_Connection] = []
            opened: list[_Connection] = []
            ids = itertools.count(1)

            async def open_connection() -> _Connection:
                connection = _Connection(await trio.open_tcp_stream(host, port))
                opened.append(connection)
                return connection

            try:
                first = await open_connection()
                init = {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": PROTOCOL_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "h11-bench", "version": "1.0"},
                    },
                }
                response, body = await first.post(target, headers, json.dumps(init).encode())
                negotiated = _answer(response, body, 0)["result"]["protocolVersion"]
                session = next(
                    (v.decode() for k, v in response.headers if k == b"mcp-session-id"), None
                )
                headers.append(("mcp-protocol-version", negotiated))
                if session is not None:
                    headers.append(("mcp-session-id", session))
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                response, body = await first.post(target, headers, json.dumps(note).encode())
                if response.status_code not in (200, 202):
                    raise AssertionError(f"initialized: HTTP {response.status_code}")
                idle.append(first)
                text = workload.text
                arguments = {"text": text}
                dumps = json.dumps

                async def exchange() -> dict[str, Any]:
                    connection = idle.pop() if idle else await open_connection()
                    request_id = next(ids)
                    request = {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": "tools/call",
                        "params": {"name": TOOL_NAME, "arguments": arguments},
                    }
                    response, body = await connection.post(target, headers, dumps(request).encode())
                    if connection.reusable:
                        idle.append(connection)
                    else:
                        opened.remove(connection)
                        await connection.stream.aclose()
                    return _answer(response, body, request_id)

                answer = await exchange()
                check_echo(answer["result"]["content"][0]["text"], text)

                async def call() -> None:
                    answer = await exchange()
                    if "result" not in answer or answer["result"].get("isError"):
                        raise AssertionError(f"call failed: {answer}")

                yield call
            finally:
                for connection in opened:
                    await connection.stream.aclose()


def _implementation(kind: str) -> Implementation:
    return Implementation(
        name=f"h11-{kind}",
        description=f"lean h11/Trio Streamable HTTP client -> {kind} server (own process)",
        runtime=trio_runtime(),
        drivers={"http": lambda: HttpDriver(kind)},
        versions={"h11": version("h11"), "trio": trio.__version__},
    )


TRIMCP = _implementation("trimcp")
SDK = _implementation("sdk")

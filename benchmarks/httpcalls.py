"""Count what an HTTP client spends per call: ``python -m benchmarks.httpcalls``.

Figures that do not depend on the machine's load, for trimcp's Streamable HTTP client
and the floor's raw h11 client (:mod:`trimcp.bench._h11`) side by side: Python calls per
call under ``sys.setprofile`` (``call`` and ``c_call`` events, grouped by function),
Trio task steps per call, and gen-0 collections per 1,000 calls. Both drive the same
canned responder: an h11 server on 127.0.0.1 in a thread of its own (so the profiler,
set for the client's thread only, never sees it) answering every POST with a fixed
JSON-RPC answer for the request's id, so the server's cost is the same for both.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import sys
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

import h11
import trio

from trimcp import open_client
from trimcp.bench._h11 import H11Client
from trimcp.transports import streamable_http

_VERSION = "2025-06-18"
_INIT = {
    "protocolVersion": _VERSION,
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "canned", "version": "1"},
}
_TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
_ECHO = {"content": [{"type": "text", "text": "hello"}], "isError": False}


def _answer(body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    message = json.loads(body)
    if "id" not in message:
        return 202, [], b""
    method = message["method"]
    result = _INIT if method == "initialize" else _TOOLS if method == "tools/list" else _ECHO
    out = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
    headers = [(b"content-type", b"application/json")]
    if method == "initialize":
        headers.append((b"mcp-session-id", b"canned-session"))
    return 200, headers, out


async def _serve_one(stream: trio.SocketStream) -> None:
    conn = h11.Connection(h11.SERVER)
    body = bytearray()
    async with stream:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                conn.receive_data(data)
                if not data and conn.their_state is h11.IDLE:
                    return
            elif isinstance(event, h11.Request):
                method = event.method
                body.clear()
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                if method == b"POST":
                    status, headers, out = _answer(bytes(body))
                else:  # the standalone GET stream (and DELETE): not offered
                    status, headers, out = 405, [], b""
                headers = [*headers, (b"content-length", str(len(out)).encode())]
                data = conn.send(h11.Response(status_code=status, headers=headers))
                await stream.send_all(
                    data + conn.send(h11.Data(data=out)) + conn.send(h11.EndOfMessage())
                )
                conn.start_next_cycle()
            else:
                return


def _responder(ready: list[Any]) -> None:
    """Serve on 127.0.0.1 until cancelled; ``ready`` gets the port, the Trio token and
    the scope to cancel (from the main thread)."""

    async def main() -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        with trio.CancelScope() as scope:
            ready[:] = [listeners[0].socket.getsockname()[1], trio.lowlevel.current_trio_token()]
            ready.append(scope)
            await trio.serve_listeners(_serve_one, listeners)

    trio.run(main)


class _Steps(trio.abc.Instrument):
    def __init__(self) -> None:
        self.steps = 0

    def before_task_step(self, _task: object) -> None:
        self.steps += 1


async def _drive(call: Callable[[], Awaitable[object]], n: int, concurrency: int) -> None:
    left = [n]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await call()

    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)


async def _measure(impl: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    counts: collections.Counter[str] = collections.Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            counts[f"{code.co_filename.rsplit('/', 2)[-1]}:{code.co_qualname}"] += 1
        elif event == "c_call":
            counts[f"C:{getattr(arg, '__qualname__', arg)}"] += 1

    collections_seen = [0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 0:
            collections_seen[0] += 1

    async def windowed(call: Callable[[], Awaitable[object]]) -> dict[str, Any]:
        await _drive(call, args.warmup, args.concurrency)
        steps = _Steps()
        trio.lowlevel.add_instrument(steps)
        gc.callbacks.append(on_gc)
        sys.setprofile(profile)
        try:
            await _drive(call, args.calls, args.concurrency)
        finally:
            sys.setprofile(None)
            gc.callbacks.remove(on_gc)
            trio.lowlevel.remove_instrument(steps)
        return {"steps": steps.steps / args.calls, "gc0": collections_seen[0] * 1000 / args.calls}

    if impl == "floor":
        client = H11Client(url)
        await client.initialize()
        params = {"name": "echo", "arguments": {"text": "hello"}}
        try:
            figures = await windowed(lambda: client.request("tools/call", params))
        finally:
            await client.aclose()
    else:
        transport = streamable_http(url, max_connections=args.connections)
        async with open_client(transport, era="handshake") as session:
            figures = await windowed(lambda: session.call_tool("echo", {"text": "hello"}))
    figures["calls"] = sum(counts.values()) / args.calls
    figures["by_function"] = {k: v / args.calls for k, v in counts.most_common()}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--connections", type=int, default=32, help="trimcp's pool size")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    ready: list[Any] = []
    thread = threading.Thread(target=_responder, args=(ready,))
    thread.start()
    try:
        while len(ready) < 3:
            threading.Event().wait(0.01)
        url = f"http://127.0.0.1:{ready[0]}/mcp"
        results = {impl: trio.run(_measure, impl, url, args) for impl in ("trimcp", "floor")}
    finally:
        while len(ready) < 3:
            threading.Event().wait(0.01)
        trio.from_thread.run_sync(ready[2].cancel, trio_token=ready[1])
        thread.join()
    ours, floor = results["trimcp"], results["floor"]
    for key in ("calls", "steps", "gc0"):
        print(f"{key:>6}: trimcp {ours[key]:7.1f}  floor {floor[key]:7.1f}")
    print(f"\n{'per call':>8} {'floor':>7}  function (trimcp's top {args.top})")
    for name, value in list(ours["by_function"].items())[: args.top]:
        print(f"{value:8.2f} {floor['by_function'].get(name, 0.0):7.2f}  {name}")


if __name__ == "__main__":
    main()

"""Load probes: trimcp's servers under abuse, on 127.0.0.1 only, bounded in time.

Not a test: figures depend on the machine and its load. Each probe starts a server in a
child process (so its memory is its own), attacks it as a client on the same machine
would, and prints what held:

* ``events``: sessions whose tools stream megabytes of notifications; the server's
  resident memory against the event store's byte budgets.
* ``slowloris``: slow connections arriving every second (heads dribbled in, never
  finished) while a client makes a request every 0.2 s; that client's latency.
* ``sessions``: bare ``initialize`` floods (never ``initialized``); how many the server
  holds, and how long until a client is served again.
* ``uploads``: many connections each sending a body of ``max_body_size`` slowly, while
  a client makes a request every 0.2 s; the server's peak resident memory against the
  inbound budget, and what the uploaders and the client got. (On one machine they
  share an address: pass ``--limits '{"inbound_client_bytes": 67108864}'`` to let the
  client's small bodies through while the uploaders hold the server's whole budget.)
* ``websocket``: 3000 pipelined calls on one WebSocket against slow handlers, with a
  1 s keep-alive; whether the connection survives and every call is answered.

::

    python -m benchmarks.abuse all
    python -m benchmarks.abuse slowloris --rate 50 --seconds 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import trio

import trimcp
from trimcp.transports.http import HttpServerLimits
from trimcp.transports.websocket import WebSocketLimits

HOST = "127.0.0.1"


# ---------------------------------------------------------------- the server (child)
def probe_server() -> trimcp.Server:
    server = trimcp.Server("abuse-probe", version="1.0")

    @server.tool()
    async def emit(ctx: trimcp.ToolContext, kib: int) -> int:
        """Send ``kib`` KiB of log notifications in 64 KiB pieces."""
        chunk = "x" * 65536
        for _ in range(kib // 64):
            await ctx.log("info", chunk)
        return kib

    @server.tool()
    async def hold(seconds: float) -> float:
        """Take ``seconds`` to answer."""
        await trio.sleep(seconds)
        return seconds

    return server


async def serve(transport: str, ping: float, limits_json: str) -> None:
    server = probe_server()
    options = json.loads(limits_json)
    async with trio.open_nursery() as nursery:
        if transport == "ws":
            limits = WebSocketLimits(ping_interval=ping, ping_timeout=ping)
            port = await nursery.start(
                lambda task_status: trimcp.serve_websocket(
                    server, host=HOST, port=0, limits=limits, task_status=task_status
                )
            )
        else:
            http_limits = HttpServerLimits(**options)
            port = await nursery.start(
                lambda task_status: trimcp.serve_http(
                    server, host=HOST, port=0, limits=http_limits, task_status=task_status
                )
            )
        print(f"PORT {port}", flush=True)


@asynccontextmanager
async def child(
    transport: str = "http", ping: float = 20.0, limits: str = "{}"
) -> AsyncIterator[tuple[int, int]]:
    """A probe server in a child process: its port and pid."""
    command = [sys.executable, "-m", "benchmarks.abuse", "serve", transport, str(ping), limits]
    async with trio.open_nursery() as nursery:
        run = partial(trio.run_process, command, stdout=subprocess.PIPE, check=False)
        process = await nursery.start(run)
        assert process.stdout is not None
        line = b""
        with trio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive_some(1)
        try:
            yield int(line.split()[1]), process.pid
        finally:
            process.terminate()
            nursery.cancel_scope.cancel()


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


# ---------------------------------------------------------------- raw HTTP helpers
INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
).encode()


def post(body: bytes) -> bytes:
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


async def exchange(port: int, data: bytes, timeout: float) -> bytes:
    with trio.move_on_after(timeout):
        stream = await trio.open_tcp_stream(HOST, port)
        async with stream:
            await stream.send_all(data)
            received = b""
            try:
                while chunk := await stream.receive_some(65536):
                    received += chunk
            except trio.BrokenResourceError:
                pass
            return received
    return b""


def summary(latencies: list[float]) -> str:
    if not latencies:
        return "no successful request"
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {ordered[-1] * 1000:.1f} ms"
    )


class _Client:
    """A well-behaved client beside an attack: an ``initialize`` every 0.2 s until
    ``done``; prints as what it got."""

    def __init__(self, port: int, done: trio.Event) -> None:
        self.port = port
        self.done = done
        self.latencies: list[float] = []
        self.failures = 0

    async def run(self) -> None:
        while not self.done.is_set():
            start = time.monotonic()
            reply = await exchange(self.port, post(INIT), timeout=15)
            if reply.startswith(b"HTTP/1.1 200"):
                self.latencies.append(time.monotonic() - start)
            else:
                self.failures += 1
            await trio.sleep(0.2)

    def __str__(self) -> str:
        return f"{len(self.latencies)} served, {self.failures} failed; {summary(self.latencies)}"


# ---------------------------------------------------------------- probes
async def probe_events(args: argparse.Namespace) -> None:
    async with child(limits=args.limits) as (port, pid):
        before = rss_mib(pid)
        url = f"http://{HOST}:{port}/mcp"
        for round_ in (1, 2):
            outcomes: dict[str, int] = {}
            async with trio.open_nursery() as nursery:
                for _ in range(args.sessions):
                    nursery.start_soon(_emit_session, url, args.streams, args.kib, outcomes)
            after = rss_mib(pid)
            sent = args.sessions * args.streams * args.kib / 1024
            print(
                f"events, round {round_}: {args.sessions} sessions x {args.streams} streams x "
                f"{args.kib} KiB ({sent:.0f} MiB sent; calls: {outcomes}); server RSS "
                f"{before:.0f} -> {after:.0f} MiB "
                f"(+{(after - before) / args.sessions:.1f} MiB per session)"
            )


async def _emit_session(url: str, streams: int, kib: int, outcomes: dict[str, int]) -> None:
    """One session whose calls stream ``kib`` KiB each; it stays open (no DELETE) until
    all of them ended, answered or failed (a stream refused past a budget)."""

    async def call(client: trimcp.Client) -> None:
        try:
            await client.call_tool("emit", {"kib": kib})
            outcome = "answered"
        except trimcp.McpError as exc:
            outcome = type(exc).__name__
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    transport = trimcp.streamable_http(url)
    async with (
        trimcp.open_client(transport, era="handshake") as client,
        trio.open_nursery() as nursery,
    ):
        for _ in range(streams):
            nursery.start_soon(call, client)


async def probe_slowloris(args: argparse.Namespace) -> None:
    async with child(limits=args.limits) as (port, _pid):
        slow: list[trio.SocketStream] = []
        done = trio.Event()
        client = _Client(port, done)

        async def attacker(nursery: trio.Nursery) -> None:
            while not done.is_set():
                nursery.start_soon(_dribble, port, slow, done, args.drip)
                await trio.sleep(1 / args.rate)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(attacker, nursery)
            nursery.start_soon(client.run)
            await trio.sleep(args.seconds)
            done.set()
        print(
            f"slowloris: {len(slow)} slow connections at {args.rate}/s for {args.seconds} s; "
            f"client: {client}"
        )


async def _dribble(
    port: int, opened: list[trio.SocketStream], done: trio.Event, drip: float
) -> None:
    try:
        stream = await trio.open_tcp_stream(HOST, port)
    except OSError:
        return
    opened.append(stream)
    async with stream:
        try:
            await stream.send_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while not done.is_set():
                with trio.move_on_after(drip):
                    await done.wait()
                await stream.send_all(b"X")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return


async def probe_sessions(args: argparse.Namespace) -> None:
    async with child(limits=args.limits) as (port, pid):
        statuses: dict[str, int] = {}
        for _ in range(args.count):
            reply = await exchange(port, post(INIT), timeout=15)
            status = reply[9:12].decode() or "none"
            statuses[status] = statuses.get(status, 0) + 1
        print(f"sessions: {args.count} bare initialize POSTs from one address: {statuses}")
        start = time.monotonic()
        while True:
            reply = await exchange(port, post(INIT), timeout=15)
            if reply.startswith(b"HTTP/1.1 200"):
                break
            await trio.sleep(0.25)
        print(
            f"sessions: served again after {time.monotonic() - start:.1f} s "
            f"(server RSS {rss_mib(pid):.0f} MiB)"
        )


async def probe_uploads(args: argparse.Namespace) -> None:
    async with child(limits=args.limits) as (port, pid):
        before = peak = rss_mib(pid)
        statuses: dict[str, int] = {}
        done = trio.Event()
        client = _Client(port, done)

        async def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, rss_mib(pid))
                await trio.sleep(0.2)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            nursery.start_soon(client.run)
            async with trio.open_nursery() as uploads:
                for _ in range(args.uploaders):
                    uploads.start_soon(_upload, port, args.seconds, statuses)
            done.set()
        attempted = args.uploaders * 4
        print(
            f"uploads: {args.uploaders} bodies of 4 MiB over {args.seconds} s "
            f"({attempted} MiB at once): {statuses}; server RSS {before:.0f} MiB, peak "
            f"{peak:.0f} MiB; client: {client}"
        )


async def _upload(port: int, seconds: float, statuses: dict[str, int]) -> None:
    """One POST of an ``initialize`` padded to 4 MiB, sent in 64 pieces over ``seconds``."""
    size = 4 * 1024 * 1024
    piece = size // 64
    body = INIT + b" " * (size - len(INIT))
    reply = b""
    try:
        stream = await trio.open_tcp_stream(HOST, port)
    except OSError:
        statuses["no connection"] = statuses.get("no connection", 0) + 1
        return
    async with stream:
        try:
            await stream.send_all(post(body)[: -len(body)])
            for offset in range(0, size, piece):
                await stream.send_all(body[offset : offset + piece])
                await trio.sleep(seconds / 64)
            reply = await stream.receive_some(64)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            with trio.move_on_after(1):  # the refusal, written before the close
                try:
                    reply = await stream.receive_some(64)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    reply = b""
    status = reply[9:12].decode() or "reset"
    statuses[status] = statuses.get(status, 0) + 1


async def probe_websocket(args: argparse.Namespace) -> None:
    async with child("ws", ping=1.0) as (port, _pid):
        limits = WebSocketLimits(ping_interval=1.0, ping_timeout=1.0)
        transport = trimcp.websocket(f"ws://{HOST}:{port}/mcp", limits=limits)
        answered = 0
        start = time.monotonic()
        try:
            async with trimcp.open_client(transport, era="handshake") as client:

                async def call() -> None:
                    nonlocal answered
                    await client.call_tool("hold", {"seconds": args.hold})
                    answered += 1

                async with trio.open_nursery() as nursery:
                    for _ in range(args.calls):
                        nursery.start_soon(call)
            outcome = "the connection stayed up"
        except Exception as exc:  # the probe reports what broke instead of a traceback
            outcome = f"failed: {type(exc).__name__}"
        print(
            f"websocket: {args.calls} pipelined calls of {args.hold} s, 1 s keep-alive: "
            f"{answered} answered in {time.monotonic() - start:.1f} s; {outcome}"
        )


PROBES = {
    "events": probe_events,
    "slowloris": probe_slowloris,
    "sessions": probe_sessions,
    "uploads": probe_uploads,
    "websocket": probe_websocket,
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        trio.run(serve, argv[1], float(argv[2]), argv[3])
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.abuse", description=__doc__)
    parser.add_argument("probe", choices=[*PROBES, "all"])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--streams", type=int, default=16)
    parser.add_argument("--kib", type=int, default=4096)
    parser.add_argument("--rate", type=float, default=40.0)
    parser.add_argument("--drip", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--count", type=int, default=1024)
    parser.add_argument("--uploaders", type=int, default=100)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--hold", type=float, default=0.2)
    parser.add_argument(
        "--limits",
        default="{}",
        help="HttpServerLimits of the HTTP server, as JSON (for example "
        "'{\"max_connections_per_client\": 1000}': on one machine the attacker and the "
        "client share an address, so the per-client budget turns both away)",
    )
    args = parser.parse_args(argv)
    for name in PROBES if args.probe == "all" else [args.probe]:
        trio.run(PROBES[name], args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

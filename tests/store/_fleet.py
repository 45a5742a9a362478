"""N ``trimcp serve --http --store redis://`` processes behind a real haproxy
(round-robin, no affinity), all on 127.0.0.1, started and stopped by the test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import trio

from ._services import free_port, require

SERVER = Path(__file__).with_name("_e2e_server.py")
#: Bound on one process becoming ready.
READY: Final = 30.0

HAPROXY_CONFIG = """\
global
    maxconn 256
    log stdout format raw local0
defaults
    mode http
    log global
    option httplog
    retries 3
    option redispatch 1
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 5s
frontend mcp
    bind 127.0.0.1:{port}
    capture request header Last-Event-ID len 80
    capture request header Mcp-Session-Id len 40
    default_backend fleet
backend fleet
    balance roundrobin
{servers}
"""


class Process:
    """One child process and what it wrote (stdout and stderr, drained as it runs)."""

    def __init__(self, name: str, process: trio.Process) -> None:
        self.name = name
        self.process = process
        self.output = bytearray()
        self.ready = trio.Event()
        self.marker = b""

    async def drain(self, stream: trio.abc.ReceiveStream) -> None:
        async with stream:
            async for chunk in stream:
                self.output += chunk
                if self.marker and self.marker in self.output:
                    self.ready.set()

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")

    def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()


class Fleet:
    def __init__(self, url: str, balancer: Process, workers: list[Process]) -> None:
        self.url = url
        self.balancer = balancer
        self.workers = workers

    def numbers(self) -> dict[str, str]:
        """The balancer's name of each worker (``p0`` ...) by its store process number
        (which the ids of the streams it writes begin with), from the workers' logs."""
        out = {}
        for worker in self.workers:
            found = re.search(r"process (\d+) of the store", worker.text)
            assert found is not None, worker.text[-2000:]
            out[found.group(1)] = worker.name
        return out


async def _start(
    nursery: trio.Nursery,
    name: str,
    command: list[str],
    env: dict[str, str],
    marker: bytes = b"",
) -> Process:
    """Start ``command``; its output (stdout and stderr) is read until it ends."""
    process = await trio.lowlevel.open_process(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
    )
    child = Process(name, process)
    child.marker = marker
    assert process.stdout is not None
    nursery.start_soon(child.drain, process.stdout)
    return child


@asynccontextmanager
async def fleet(
    redis_url: str, workdir: Path, workers: int = 3, *, lease_ttl: float = 1.0
) -> AsyncIterator[Fleet]:
    """``workers`` trimcp processes sharing ``redis_url`` behind haproxy; every
    process is killed and reaped on the way out."""
    haproxy = require("haproxy")
    ports = [free_port() for _ in range(workers)]
    front = free_port()
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH")}
    store = f"{redis_url}?lease_ttl={lease_ttl}"
    children: list[Process] = []
    async with trio.open_nursery() as nursery:
        try:
            for n, port in enumerate(ports):
                command = [
                    sys.executable, "-m", "trimcp", "--log-level", "INFO", "serve", str(SERVER),
                    "--http", f"127.0.0.1:{port}", "--store", store,
                ]  # fmt: skip
                children.append(await _start(nursery, f"p{n}", command, env, b"trimcp: serving"))
            servers = "\n".join(
                f"    server p{n} 127.0.0.1:{port} check inter 300ms fall 1 rise 2"
                for n, port in enumerate(ports)
            )
            config = workdir / "haproxy.cfg"
            config.write_text(HAPROXY_CONFIG.format(port=front, servers=servers))
            balancer = await _start(nursery, "haproxy", [haproxy, "-db", "-f", str(config)], env)
            children.append(balancer)
            with trio.fail_after(READY):
                for child in children[:workers]:
                    await child.ready.wait()
                await _wait_listening(front)
            yield Fleet(f"http://127.0.0.1:{front}/mcp", balancer, children[:workers])
        finally:
            for child in children:
                child.kill()
            with trio.move_on_after(10):
                for child in children:
                    await child.process.wait()
            nursery.cancel_scope.cancel()


async def _wait_listening(port: int) -> None:
    while True:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            await trio.sleep(0.05)
            continue
        await stream.aclose()
        return

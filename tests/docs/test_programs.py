"""The programs of the concept pages and the how-to guides print what the pages show.

In-memory ones run in this Trio run on a mock clock (their sleeps and timeouts cost no
time); those that serve on 127.0.0.1 run as processes on the real clock (the Redis fleet with
a redis-server of its own); the
conformance run is synchronous (the machine runs its own Trio loops)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from ..store._services import RedisServer
from ._load import load, run_program, shown

#: Each program prints what the ``.txt`` file of the same name holds.
IN_MEMORY = [
    "concepts/anatomy.py",
    "concepts/cancellation.py",
    "concepts/eras.py",
    "concepts/limits.py",
    "howto/otel.py",
    "howto/middleware.py",
    "howto/middleware_own.py",
    "howto/tasks.py",
    "howto/skills.py",
    "howto/apps.py",
    "howto/multi_process.py",
]
PROCESSES = ["concepts/transports.py", "howto/shutdown.py"]


def _output(program: str) -> str:
    return shown(program.removesuffix(".py") + ".txt")


@pytest.mark.parametrize("program", IN_MEMORY)
async def test_in_memory_programs(
    program: str, capsys: pytest.CaptureFixture[str], autojump_clock: trio.testing.MockClock
) -> None:
    await load(program).main()
    assert capsys.readouterr().out == _output(program)


@pytest.mark.parametrize("program", PROCESSES)
async def test_programs_serving_on_loopback(program: str) -> None:
    assert await run_program(program) == _output(program)


def test_the_conformance_run(capsys: pytest.CaptureFixture[str]) -> None:
    load("howto/conform.py").main()
    assert capsys.readouterr().out == shown("howto/conform.txt")


async def test_the_redis_fleet(tmp_path: Path) -> None:
    """Two servers on one real redis-server serve one session between them."""
    redis = RedisServer(tmp_path)
    redis.start()
    try:
        printed = await run_program("howto/redis_fleet.py", REDIS_URL=redis.url)
    finally:
        redis.stop()
    assert printed == _output("howto/redis_fleet.py")

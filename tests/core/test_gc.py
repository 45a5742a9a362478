"""``trimcp.tune_gc``, ``trimcp serve --gc`` and the benchmark's collector setting.

The collector is process-wide state: every test here that changes it restores it
(thresholds and freeze), or runs the change in a child process.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

import trimcp
from trimcp import open_client, stdio_command
from trimcp.bench._gc import ENV, passed_on


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    frozen = gc.get_freeze_count()
    assert frozen == 0, "a test left objects frozen"
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.mark.usefixtures("restored_gc")
def test_tune_gc_raises_the_young_threshold_and_keeps_the_others() -> None:
    before = gc.get_threshold()
    previous = trimcp.tune_gc(freeze=False)
    assert previous == before
    assert gc.get_threshold() == (20_000, *before[1:])
    assert gc.get_freeze_count() == 0
    assert trimcp.tune_gc(5_000, freeze=False) == (20_000, *before[1:])
    assert gc.get_threshold()[0] == 5_000


@pytest.mark.usefixtures("restored_gc")
def test_tune_gc_collects_before_it_freezes_so_garbage_is_never_frozen() -> None:
    garbage = _Node()
    dead = weakref.ref(garbage)
    alive = _Node()
    del garbage
    gc.disable()  # nothing collects the cycle but tune_gc itself
    try:
        trimcp.tune_gc()
    finally:
        gc.enable()
    assert dead() is None
    assert gc.get_freeze_count() > 0
    assert alive.me is alive
    # The survivor is in the permanent generation: a full collection does not walk it.
    assert not any(o is alive for o in gc.get_objects())


@pytest.mark.usefixtures("restored_gc")
@pytest.mark.parametrize("young", [0, -1])
def test_a_threshold_that_would_stop_collection_is_refused(young: int) -> None:
    before = gc.get_threshold()
    with pytest.raises(ValueError, match="at least 1"):
        trimcp.tune_gc(young)
    assert gc.get_threshold() == before


_REPORTER = """
import gc
import trimcp

server = trimcp.Server("gc-reporter")


@server.tool()
async def collector() -> str:
    return f"{gc.get_threshold()[0]} {gc.get_freeze_count()}"
"""


@pytest.mark.parametrize(("flag", "tuned"), [((), True), (("--gc", "default"), False)])
def test_trimcp_serve_tunes_the_collector_unless_told_not_to(
    tmp_path: Path, flag: tuple[str, ...], tuned: bool
) -> None:
    path = tmp_path / "reporter.py"
    path.write_text(_REPORTER)
    command = stdio_command(sys.executable, "-m", "trimcp", "serve", *flag, str(path))

    async def main() -> str:
        with trio.fail_after(60):
            async with open_client(command) as client:
                result = await client.call_tool("collector", {})
        block = result.content[0]
        assert isinstance(block, trimcp.TextContent)
        return block.text

    young, frozen = (int(n) for n in trio.run(main).split())
    if tuned:
        assert young == 20_000
        assert frozen > 0
    else:
        assert young == gc.get_threshold()[0]
        assert frozen == 0


def _bench_process(mode: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if mode is not None:
        env[ENV] = mode
    code = (
        "from trimcp.bench._gc import apply_from_env, describe; apply_from_env(); print(describe())"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def test_bench_processes_take_their_collector_from_the_environment() -> None:
    tuned = _bench_process("tuned")
    assert tuned.returncode == 0, tuned.stderr
    assert tuned.stdout.startswith("tuned (thresholds 20000/")
    assert " 0 objects frozen" not in tuned.stdout
    default = _bench_process(None)
    assert default.stdout.startswith(f"default (thresholds {gc.get_threshold()[0]}/")
    assert default.stdout.rstrip().endswith(", 0 objects frozen)")
    wrong = _bench_process("fast")
    assert wrong.returncode != 0
    assert f"{ENV}='fast': expected one of tuned, default" in wrong.stderr


def test_the_setting_is_passed_on_to_children_with_a_minimal_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert passed_on() == {}
    monkeypatch.setenv(ENV, "default")
    assert passed_on() == {ENV: "default"}

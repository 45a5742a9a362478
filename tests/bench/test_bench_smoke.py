"""Smoke test of the benchmark tool: a tiny in-memory run, its JSON output's shape.

Not a timed test: it checks that every metric produced a sample for trimcp and the
floor, that the figures are positive and that cancellation left nothing behind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trimcp.cli import build_parser


def test_bench_subcommand_parses() -> None:
    args = build_parser().parse_args(["bench", "--transport", "memory,stdio", "--quick"])
    assert args.transport == ("memory", "stdio")
    assert args.quick


def test_python_m_benchmarks_is_the_bench_command() -> None:
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "benchmarks", "--help"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, cwd=root, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: trimcp bench")


def test_tiny_memory_run_writes_complete_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    command = [
        sys.executable, "-m", "trimcp.bench", "--transport", "memory", "--impl", "trimcp,floor",
        "--concurrency", "1,10", "--repeats", "1", "--warmup", "0.05", "--duration", "0.2",
        "--parked", "20", "--fanout", "5", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["settings"]["transports"] == ["memory"]
    assert set(data["implementations"]["memory"]) == {"trimcp", "floor"}
    # Every worker ran under the same collector, and says so (see trimcp.bench._gc).
    assert data["settings"]["gc"] == "tuned"
    for hello in data["implementations"]["memory"].values():
        assert hello["gc"].startswith("tuned (thresholds 20000/"), hello["gc"]
    assert "memory: garbage collector: trimcp tuned" in done.stdout
    by_metric: dict[str, list[dict[str, object]]] = {}
    for record in data["samples"]:
        assert "error" not in record, record
        by_metric.setdefault(record["metric"], []).append(record)
    throughput = by_metric["throughput"]
    assert {(r["implementation"], r["concurrency"]) for r in throughput} == {
        (name, level) for name in ("trimcp", "floor") for level in (1, 10)
    }
    for record in throughput:
        sample = record["sample"]
        assert sample["calls"] > 0
        assert sample["calls_per_s"] > 0
        assert 0 < sample["latency_s"]["p50"] <= sample["latency_s"]["p99"]
    for record in by_metric["parked"]:
        sample = record["sample"]
        assert sample["parked"] == 20
        assert sample["observed"] == 20
        assert sample["cancel_s"] > 0
        assert sample["bytes_per_request"] > 0
        assert sample["leak_free"] is True
    for record in by_metric["fanout"]:
        sample = record["sample"]
        assert sample["n"] == 5
        assert sample["one_s"] > 0
        assert sample["fanout_s"] > 0
    summary = data["summary"]["memory"]["throughput"]["calls/s"]
    assert summary["10"]["trimcp"]["median"] > 0
    assert summary["10"]["trimcp/floor"] > 0
    # The summary is in the units its titles name, as the tables are; samples stay SI.
    p50_ms = data["summary"]["memory"]["throughput"]["p50 latency, ms"]["1"]["trimcp"]
    p50_s = [r["sample"]["latency_s"]["p50"] for r in throughput if r["implementation"] ==
             "trimcp" and r["concurrency"] == 1]  # fmt: skip
    assert p50_ms["median"] == p50_s[0] * 1e3
    kib = data["summary"]["memory"]["parked"]["memory per parked request, KiB"]["20"]["trimcp"]
    parked = [r["sample"] for r in by_metric["parked"] if r["implementation"] == "trimcp"]
    assert kib["median"] == parked[0]["bytes_per_request"] / 1024
    assert "calls/s" in done.stdout


def test_a_server_command_that_exits_at_once_is_reported_not_waited_for() -> None:
    exits_after_one_line = [sys.executable, "-c", "import sys; sys.stdin.readline()"]
    command = [
        sys.executable, "-m", "trimcp", "bench", "--quick", "--metric", "throughput",
        "--concurrency", "1", "--server-command", *exits_after_one_line,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert (
        "ServerGone: the server command exited with status 0 before answering initialize"
        in done.stdout
    )
    assert "Traceback" not in done.stderr


def test_a_missing_tool_or_package_says_what_to_pass_or_install() -> None:
    from trimcp.bench._worker import _why_unavailable

    assert _why_unavailable(ModuleNotFoundError("No module named 'mcp'", name="mcp")) == (
        "needs the Python package 'mcp': pip install 'trimcp[bench]' (or pip install mcp)"
    )
    command = [
        sys.executable, "-m", "trimcp", "bench", "--quick", "--metric", "throughput",
        "--concurrency", "1", "--server-command", sys.executable, "-m", "trimcp", "serve",
        str(Path(__file__).parents[1] / "interop" / "trimcp_server.py"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert "the first call of tool 'echo' failed" in done.stdout
    assert "pass --tool NAME and --arguments JSON for a tool it has" in done.stdout

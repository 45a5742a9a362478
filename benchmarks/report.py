"""Aggregate samples into medians with spread, and render the terminal tables.

For each metric (calls/s, p50, p99) a table has one row per concurrency level and, per
implementation, ``median (min-max)`` over the repeats, then the ratios of the medians
of the :data:`PAIRS` measured (trimcp to the SDK and the floor; over HTTP also the lean
client against each server). Figures a run did not measure (server CPU in memory) are
left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.stats import Spread


def _total_cpu(sample: dict[str, Any]) -> float | None:
    server = sample.get("server_cpu_us_per_call")
    return None if server is None else float(sample["cpu_us_per_call"]) + float(server)


#: (title, how to read one figure from a sample (None: not measured), display scale, number format)
FIGURES: tuple[tuple[str, Callable[[dict[str, Any]], float | None], float, str], ...] = (
    ("calls/s", lambda s: s["calls_per_s"], 1.0, "{:.0f}"),
    ("p50 latency, ms", lambda s: s["latency_s"]["p50"], 1e3, "{:.3f}"),
    ("p99 latency, ms", lambda s: s["latency_s"]["p99"], 1e3, "{:.3f}"),
    (
        "worker CPU per call, us (robust to other load; over http the client only)",
        lambda s: s["cpu_us_per_call"],
        1.0,
        "{:.1f}",
    ),
    (
        "server process CPU per call, us (http)",
        lambda s: s.get("server_cpu_us_per_call"),
        1.0,
        "{:.1f}",
    ),
    ("client + server CPU per call, us (http)", _total_cpu, 1.0, "{:.1f}"),
)

#: (subject, baseline) pairs whose median ratio is shown when both were measured.
PAIRS = (
    ("trimcp", "sdk"),
    ("trimcp", "sdk-direct"),
    ("trimcp", "floor"),
    ("h11-trimcp", "h11-sdk"),
)


def aggregate(
    samples: Sequence[dict[str, Any]], figure: Callable[[dict[str, Any]], float | None]
) -> dict[tuple[str, int], Spread]:
    """(implementation, level) -> spread of ``figure`` over the successful repeats."""
    values: dict[tuple[str, int], list[float]] = defaultdict(list)
    for record in samples:
        value = figure(record["sample"]) if "sample" in record else None
        if value is not None:
            values[record["implementation"], record["concurrency"]].append(value)
    return {key: Spread.of(v) for key, v in values.items()}


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """Medians, spreads and ratios per figure, level and implementation (for ``--json``)."""
    names = [n for n, hello in results["implementations"].items() if hello.get("available")]
    levels = results["settings"]["concurrency"]
    out: dict[str, Any] = {}
    for title, figure, _scale, _fmt in FIGURES:
        table = aggregate(results["samples"], figure)
        rows = {}
        for level in levels:
            row: dict[str, Any] = {}
            for name in names:
                spread = table.get((name, level))
                if spread is not None:
                    row[name] = spread.__dict__
            for subject, base in PAIRS:
                ratio = _ratio(table, subject, base, level)
                if ratio is not None:
                    row[f"{subject}/{base}"] = ratio
            rows[str(level)] = row
        out[title] = rows
    return out


def _ratio(table: dict[tuple[str, int], Spread], a: str, b: str, level: int) -> float | None:
    x, y = table.get((a, level)), table.get((b, level))
    if x is None or y is None or not y.median:
        return None
    return x.median / y.median


def render(results: dict[str, Any]) -> str:
    """The terminal tables."""
    hellos = results["implementations"]
    names = [n for n, hello in hellos.items() if hello.get("available")]
    levels = results["settings"]["concurrency"]
    lines: list[str] = []
    for name, hello in hellos.items():
        if hello.get("available"):
            versions = ", ".join(f"{k} {v}" for k, v in hello["versions"].items())
            lines.append(f"{name:<11} {hello['description']} [{hello['runtime']}; {versions}]")
        else:
            lines.append(f"{name:<11} UNAVAILABLE: {hello.get('reason')}")
    pairs = [(a, b) for a, b in PAIRS if a in names and b in names]
    ratios = [f"{a}/{b}" for a, b in pairs]
    for title, figure, scale, fmt in FIGURES:
        table = aggregate(results["samples"], figure)
        if not table:
            continue
        header = ["in flight", *names, *ratios]
        body = []
        for level in levels:
            cells = [str(level)]
            for name in names:
                spread = table.get((name, level))
                cells.append(_cell(spread, scale, fmt))
            for subject, base in pairs:
                ratio = _ratio(table, subject, base, level)
                cells.append("-" if ratio is None else f"{ratio:.2f}x")
            body.append(cells)
        lines += ["", f"{title} (median of repeats, min-max)", *_grid(header, body)]
    if ratios:
        lines += [
            "",
            "ratios are a's median / b's: above 1 is better for "
            "calls/s, below 1 is better for latency and CPU",
        ]
    return "\n".join(lines)


def _cell(spread: Spread | None, scale: float, fmt: str) -> str:
    if spread is None or spread.n == 0:
        return "-"
    med, low, high = (fmt.format(v * scale) for v in (spread.median, spread.low, spread.high))
    return f"{med} ({low}-{high})" if spread.n > 1 else med


def _grid(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    rule = "  ".join("-" * w for w in widths)
    return [fmt.format(*header), rule, *(fmt.format(*row) for row in body)]

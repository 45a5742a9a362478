"""Aggregate samples into medians with spread; render the terminal tables.

Per transport, era and metric, a table has one row per level and, per implementation,
``median (min-max)`` over the repeats, then the ratios of the medians of the
:data:`PAIRS` measured (trimcp to the SDK and to the floor; the raw client against
each server), so ratios always compare implementations within one (transport, era).
A block is named by :func:`block`: the transport alone when only the handshake era
ran (as before eras were a dimension), else ``"<transport> <era>"``. :func:`summary` is
the same in JSON form, keyed by block, for the output file. A pair whose ratio measures
something other than one stack against its peer has a line in :data:`PAIR_NOTES`,
printed with the tables' notes (the hypercorn pairs: trimcp's cost and hypercorn's).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from ._era import DEFAULT_ERA, ERA_FREE
from ._stats import Spread

__all__ = [
    "FIGURES",
    "PAIR_NOTES",
    "aggregate",
    "block",
    "eras_of",
    "pair_label",
    "pairs_of",
    "render",
    "summary",
]

Figure = tuple[str, Callable[[dict[str, Any]], float | None], float, str]


def _total_cpu(sample: dict[str, Any]) -> float | None:
    server = sample.get("server_cpu_us_per_call")
    return None if server is None else float(sample["cpu_us_per_call"]) + float(server)


def _get(key: str) -> Callable[[dict[str, Any]], float | None]:
    def read(sample: dict[str, Any]) -> float | None:
        value = sample.get(key)
        return None if value is None else float(value)

    return read


#: metric -> (title, one figure of a sample (None: not measured), scale, format)
FIGURES: dict[str, tuple[Figure, ...]] = {
    "throughput": (
        ("calls/s", _get("calls_per_s"), 1.0, "{:.0f}"),
        ("p50 latency, ms", lambda s: s["latency_s"]["p50"], 1e3, "{:.3f}"),
        ("p99 latency, ms", lambda s: s["latency_s"]["p99"], 1e3, "{:.3f}"),
        ("client CPU per call, us (robust to other load)", _get("cpu_us_per_call"), 1.0, "{:.1f}"),
        ("server process CPU per call, us", _get("server_cpu_us_per_call"), 1.0, "{:.1f}"),
        ("client + server CPU per call, us", _total_cpu, 1.0, "{:.1f}"),
    ),
    "parked": (
        ("memory per parked request, KiB", _get("bytes_per_request"), 1 / 1024, "{:.1f}"),
        ("cancellation of all parked calls, ms", _get("cancel_s"), 1e3, "{:.1f}"),
        ("handlers that observed cancellation", _get("observed"), 1.0, "{:.0f}"),
        ("leak-free runs (1 = clean)", lambda s: float(bool(s["leak_free"])), 1.0, "{:.0f}"),
    ),
    "fanout": (
        ("one sampling call, ms", _get("one_s"), 1e3, "{:.2f}"),
        ("fan-out of n sampling calls, ms", _get("fanout_s"), 1e3, "{:.2f}"),
        ("fan-out / one", _get("ratio"), 1.0, "{:.1f}"),
    ),
}

#: (subject, baseline) pairs whose median ratio is shown when both were measured.
PAIRS = (
    ("trimcp", "sdk"),
    ("trimcp", "floor"),
    ("trimcp", "floor-objects"),
    ("trimcp-hypercorn", "trimcp"),
    ("trimcp-hypercorn", "floor-hypercorn"),
    ("floor-hypercorn", "floor"),
    ("trimcp-json", "sdk-json"),
    ("trimcp-hypercorn", "sdk"),
    ("raw-trimcp", "raw-sdk"),
    ("raw-trimcp", "floor"),
)


#: What a pair's ratio measures, where that is not plain "a against its peer b":
#: (a short form, shown under each table with the pair and in the plot's legend; the
#: full sentence, in the report's notes).
PAIR_NOTES = {
    ("trimcp-hypercorn", "floor-hypercorn"): (
        "trimcp's own cost under hypercorn",
        "trimcp's own cost under hypercorn: its client and app against the floor's, the "
        "same engine and configuration (server CPU per call: the two apps alone)",
    ),
    ("floor-hypercorn", "floor"): (
        "hypercorn's own cost",
        "hypercorn's own cost: the floor's app and client under hypercorn against the "
        "bare h11 floor (what any app under hypercorn can reach)",
    ),
}


def pair_label(a: str, b: str) -> str:
    """``a/b``, with the pair's short note when it has one."""
    note = PAIR_NOTES.get((a, b))
    return f"{a}/{b}" if note is None else f"{a}/{b} ({note[0]})"


def pairs_of(names: Sequence[str]) -> list[tuple[str, str]]:
    """The :data:`PAIRS` among ``names``, then each ``NAME@base`` against ``NAME``
    (a version of trimcp against the baseline it changes, see ``--baseline``)."""
    present = set(names)
    pairs = [(a, b) for a, b in PAIRS if a in present and b in present]
    pairs += [(n.removesuffix("@base"), n) for n in names if n.endswith("@base")]
    return [(a, b) for a, b in pairs if a in present]


def eras_of(results: dict[str, Any]) -> list[str]:
    """The eras a run measured (files written before eras were recorded: handshake)."""
    return list(results["settings"].get("eras", [DEFAULT_ERA]))


def block(transport: str, era: str, eras: Sequence[str]) -> str:
    """The name of the (transport, era) block in tables, summary and plot."""
    return transport if list(eras) == [DEFAULT_ERA] else f"{transport} {era}"


def _selected(
    results: dict[str, Any], transport: str, era: str, metric: str
) -> list[dict[str, Any]]:
    return [
        r
        for r in results["samples"]
        if r["transport"] == transport
        and r.get("era", DEFAULT_ERA) == era
        and r["metric"] == metric
        and "sample" in r
        and "unsupported" not in r["sample"]
    ]


def aggregate(
    samples: Sequence[dict[str, Any]], figure: Callable[[dict[str, Any]], float | None]
) -> dict[tuple[str, int], Spread]:
    """(implementation, level) -> spread of ``figure`` over the successful repeats."""
    values: dict[tuple[str, int], list[float]] = defaultdict(list)
    for record in samples:
        value = figure(record["sample"])
        if value is not None:
            values[record["implementation"], record["concurrency"]].append(value)
    return {key: Spread.of(v) for key, v in values.items()}


def _ratio(table: dict[tuple[str, int], Spread], a: str, b: str, level: int) -> float | None:
    x, y = table.get((a, level)), table.get((b, level))
    if x is None or y is None or not y.median:
        return None
    return x.median / y.median


def _tables(results: dict[str, Any]) -> list[tuple[str, str, Figure, list[str], list[int], Any]]:
    """(block, metric, figure, implementations, levels, table) of every table."""
    out = []
    eras = eras_of(results)
    for transport, hellos in results["implementations"].items():
        names = [n for n, hello in hellos.items() if hello.get("available")]
        for era in eras:
            for metric in results["settings"]["metrics"]:
                selected = _selected(results, transport, era, metric)
                levels = sorted({r["concurrency"] for r in selected})
                for figure in FIGURES[metric]:
                    table = aggregate(selected, figure[1])
                    if table:
                        name = block(transport, era, eras)
                        out.append((name, metric, figure, names, levels, table))
    return out


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """block -> metric -> figure -> level -> medians, spreads and ratios.

    Values are in the unit the figure's title names (ms, KiB ...), as in the tables;
    the samples keep the raw SI figures (seconds, bytes).
    """
    out: dict[str, Any] = defaultdict(lambda: defaultdict(dict))
    for transport, metric, (title, _fig, scale, _fmt), names, levels, table in _tables(results):
        rows: dict[str, Any] = {}
        for level in levels:
            row: dict[str, Any] = {
                n: _scaled(table[n, level], scale) for n in names if (n, level) in table
            }
            for a, b in pairs_of(names):
                ratio = _ratio(table, a, b, level)
                if ratio is not None:
                    row[f"{a}/{b}"] = ratio
            rows[str(level)] = row
        out[transport][metric][title] = rows
    return {t: dict(m) for t, m in out.items()}


def _scaled(spread: Spread, scale: float) -> dict[str, float]:
    return {
        "median": spread.median * scale,
        "low": spread.low * scale,
        "high": spread.high * scale,
        "n": spread.n,
    }


def render(results: dict[str, Any]) -> str:
    """The terminal tables."""
    lines: list[str] = []
    for transport, hellos in results["implementations"].items():
        lines.append(f"== {transport}")
        for name, hello in hellos.items():
            if hello.get("available"):
                versions = ", ".join(f"{k} {v}" for k, v in hello["versions"].items())
                lines.append(
                    f"  {name:<16} {hello['description']} [{hello['runtime']}; {versions}]"
                )
            else:
                lines.append(f"  {name:<16} UNAVAILABLE: {hello.get('reason')}")
            if hello.get("available") and name in ERA_FREE and eras_of(results) != [DEFAULT_ERA]:
                lines.append(f"  {'':<16} (no MCP, no era: the same run in every era's block)")
    for transport, metric, figure, names, levels, table in _tables(results):
        lines += _table_lines(transport, metric, figure, names, levels, table)
    eras = eras_of(results)

    def where(r: dict[str, Any]) -> str:
        name = block(r["transport"], r.get("era", DEFAULT_ERA), eras)
        return f"{name} {r['metric']} {r['implementation']}"

    unsupported = sorted(
        {
            f"{where(r)}: {r['sample']['unsupported']}"
            for r in results["samples"]
            if "unsupported" in r.get("sample", {})
        }
    )
    errors = [f"{where(r)}: {r['error']}" for r in results["samples"] if "error" in r]
    notes = _notes(results)
    if notes:
        lines += ["", "notes:", *(f"  {n}" for n in notes)]
    if unsupported:
        lines += ["", "not measured:", *(f"  {u}" for u in unsupported)]
    if errors:
        lines += ["", "errors:", *(f"  {e}" for e in errors)]
    lines += [
        "",
        "ratios are a's median / b's: above 1 is better for calls/s, below 1 for the rest",
    ]
    return "\n".join(lines)


def _table_lines(
    transport: str,
    metric: str,
    figure: Figure,
    names: list[str],
    levels: list[int],
    table: dict[tuple[str, int], Spread],
) -> list[str]:
    """One table: a row per level, a column per implementation, then the pairs' ratios
    (with what a pair measures under it, where :data:`PAIR_NOTES` says)."""
    title, _fig, scale, fmt = figure
    shown = [n for n in names if any((n, level) in table for level in levels)]
    pairs = pairs_of(shown)
    header = ["n" if metric != "throughput" else "in flight", *shown]
    header += [f"{a}/{b}" for a, b in pairs]
    body = []
    for level in levels:
        cells = [str(level)]
        cells += [_cell(table.get((n, level)), scale, fmt) for n in shown]
        for a, b in pairs:
            ratio = _ratio(table, a, b, level)
            cells.append("-" if ratio is None else f"{ratio:.2f}x")
        body.append(cells)
    lines = ["", f"{transport} / {metric}: {title} (median of repeats, min-max)"]
    lines += _grid(header, body)
    noted = [f"{a}/{b}: {PAIR_NOTES[a, b][0]}" for a, b in pairs if (a, b) in PAIR_NOTES]
    if noted:
        lines.append(f"  ({'; '.join(noted)})")
    return lines


def _notes(results: dict[str, Any]) -> list[str]:
    """What a reader needs next to the ratios: which floor is comparable where, and the
    JSON codec and garbage collector settings each implementation ran with (a floor
    never runs a slower codec; every process gets the same collector, :mod:`._gc`)."""
    notes = []
    for transport, hellos in results["implementations"].items():
        live = {n: h for n, h in hellos.items() if h.get("available")}
        codecs = {n: h["versions"]["codec"] for n, h in live.items() if "codec" in h["versions"]}
        if codecs:
            named = ", ".join(f"{n} {c}" for n, c in codecs.items())
            notes.append(f"{transport}: JSON codec: {named}")
        collectors = {n: h.get("gc", "not reported") for n, h in live.items()}
        if collectors:
            named = ", ".join(f"{n} {c}" for n, c in collectors.items())
            notes.append(f"{transport}: garbage collector: {named}")
        if transport == "memory" and "trimcp" in live and "floor" in live:
            notes.append(
                "memory: trimcp passes message objects while floor encodes JSON lines; "
                "floor-objects passes the dicts, the comparable floor (trimcp/floor-objects)"
            )
        for a, b in pairs_of(list(live)):
            if (a, b) in PAIR_NOTES:
                notes.append(f"{transport}: {a}/{b}: {PAIR_NOTES[a, b][1]}")
    return notes


def _cell(spread: Spread | None, scale: float, fmt: str) -> str:
    if spread is None or spread.n == 0:
        return "-"
    med, low, high = (fmt.format(v * scale) for v in (spread.median, spread.low, spread.high))
    return f"{med} ({low}-{high})" if spread.n > 1 and low != high else med


def _grid(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    rule = "  ".join("-" * w for w in widths)
    return [fmt.format(*header), rule, *(fmt.format(*row) for row in body)]

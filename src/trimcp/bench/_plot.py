"""The PNG: throughput and p99 latency against calls in flight, per implementation.

One row of three panels per (transport, era) block measured (see
:func:`._report.block`): calls/s and p99 latency on log axes, one line per
implementation through the medians with the min-max range of the repeats as error
bars; then the calls/s ratios of the report's pairs (:func:`._report.pairs_of`), one
line each, labelled with what the pair measures where that needs saying
(:data:`._report.PAIR_NOTES`). matplotlib (Agg, no display) is an optional install:
without it :func:`plot` raises ``ImportError`` and the caller reports that.
"""

from __future__ import annotations

from typing import Any

from ._era import DEFAULT_ERA
from ._report import FIGURES, aggregate, block, eras_of, pair_label, pairs_of

__all__ = ["plot"]


def plot(results: dict[str, Any], path: str) -> None:
    """Write the figure of the throughput samples in ``results`` to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eras = eras_of(results)
    throughput = [
        r
        for r in results["samples"]
        if r["metric"] == "throughput" and "sample" in r and "unsupported" not in r["sample"]
    ]
    blocks = [
        (t, e)
        for t in results["implementations"]
        for e in eras
        if any(r["transport"] == t and r.get("era", DEFAULT_ERA) == e for r in throughput)
    ]
    if not blocks:
        raise ValueError("no throughput samples to plot")
    calls, _lat, p99 = FIGURES["throughput"][:3]
    fig, axes = plt.subplots(len(blocks), 3, figsize=(16, 3.6 * len(blocks)), squeeze=False)
    for row, (transport, era) in enumerate(blocks):
        samples = [
            r
            for r in throughput
            if r["transport"] == transport and r.get("era", DEFAULT_ERA) == era
        ]
        for col, (title, figure, scale, _fmt) in enumerate((calls, p99)):
            ax = axes[row][col]
            table = aggregate(samples, figure)
            for name in dict.fromkeys(r["implementation"] for r in samples):
                levels = sorted(level for (n, level) in table if n == name)
                spreads = [table[name, level] for level in levels]
                medians = [s.median * scale for s in spreads]
                below = [(s.median - s.low) * scale for s in spreads]
                above = [(s.high - s.median) * scale for s in spreads]
                ax.errorbar(levels, medians, yerr=[below, above], marker="o", capsize=3, label=name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("calls in flight")
            ax.set_title(f"{block(transport, era, eras)}: {title}")
            ax.grid(True, which="both", alpha=0.3)
        axes[row][0].legend(fontsize="small")
        _ratios(axes[row][2], aggregate(samples, calls[1]), f"{block(transport, era, eras)}")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _ratios(ax: Any, table: dict[tuple[str, int], Any], name: str) -> None:
    """One line per pair of the report: a's median calls/s over b's, per level."""
    names = list(dict.fromkeys(n for n, _level in table))
    for a, b in pairs_of(names):
        levels = sorted(
            lv for (n, lv) in table if n == a and (b, lv) in table and table[b, lv].median
        )
        ratios = [table[a, lv].median / table[b, lv].median for lv in levels]
        ax.plot(levels, ratios, marker="o", label=pair_label(a, b))
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("calls in flight")
    ax.set_title(f"{name}: calls/s ratios (above 1: a is faster)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="x-small")

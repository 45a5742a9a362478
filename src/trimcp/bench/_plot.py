"""The PNG: throughput and p99 latency against calls in flight, per implementation.

One row of two panels per (transport, era) block measured (calls/s left, p99 right,
both on log axes; see :func:`._report.block`), one line per implementation through the
medians, with the min-max range of the repeats as error bars. matplotlib (Agg, no
display) is an optional install: without it :func:`plot` raises ``ImportError`` and the
caller reports that.
"""

from __future__ import annotations

from typing import Any

from ._era import DEFAULT_ERA
from ._report import FIGURES, aggregate, block, eras_of

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
    fig, axes = plt.subplots(len(blocks), 2, figsize=(11, 3.6 * len(blocks)), squeeze=False)
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
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)

"""``fanout``: a handler issuing ``n`` concurrent sampling calls, against one.

Each round times one ``fanout`` call with ``n = 1`` and one with ``n`` (default 100):
the tool returns once all its ``sampling/createMessage`` calls are answered (the
client answers each at once with a fixed completion). The sample has the median of
the rounds for both and their ratio; a perfectly concurrent engine keeps the ratio
far below ``n``.

A target that cannot fan out in the run's era raises :class:`._era.Unsupported`; the
sample then says why (``{"unsupported": reason}``).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from ._core import Driver, Implementation, Workload
from ._era import unsupported_in

__all__ = ["run"]


async def run(
    impl: Implementation, driver: Driver, workload: Workload, params: dict[str, Any]
) -> dict[str, Any]:
    """``params``: ``fanout`` (n), ``rounds``."""
    n = int(params["fanout"])
    rounds = int(params.get("rounds", 10))
    clock = time.perf_counter
    one: list[float] = []
    many: list[float] = []
    try:
        async with driver.connect(workload) as target:
            fanout = target.fanout
            if fanout is None:
                return {"unsupported": "the target has no fan-out tool (or cannot answer sampling)"}
            await fanout(1)
            await fanout(n)
            for _ in range(rounds):
                began = clock()
                await fanout(1)
                one.append(clock() - began)
                began = clock()
                await fanout(n)
                many.append(clock() - began)
    except BaseException as exc:
        unsupported = unsupported_in(exc)
        if unsupported is None:
            raise
        return {"unsupported": str(unsupported)}
    one_s, many_s = statistics.median(one), statistics.median(many)
    return {
        "n": n,
        "one_s": one_s,
        "fanout_s": many_s,
        "ratio": many_s / one_s if one_s > 0 else float("nan"),
        "per_reverse_call_us": 1e6 * many_s / n,
        "one_samples_s": one,
        "fanout_samples_s": many,
    }

"""The servers' counters (``bench_stats``): the live task count only when asked.

Counting walks every task of the server. The parked metric polls the counters while
the server parks and cancels a thousand calls, so those polls leave the walk out (a
server holding the most tasks would otherwise be slowed the most while being timed),
and only the leak check's reads count tasks. Each server (trimcp, the SDK's, the
floor) and each client of them (the MCP clients, the raw line client) pass the choice
on.
"""

from __future__ import annotations

from typing import Any

import pytest

from trimcp.bench._core import Workload
from trimcp.bench._probe import Probe
from trimcp.bench._registry import load


def test_a_snapshot_counts_tasks_only_when_asked() -> None:
    walks: list[int] = []

    def count() -> int:
        walks.append(1)
        return 7

    probe = Probe(count)
    assert probe.snapshot(False)["tasks"] is None
    assert walks == []
    assert probe.snapshot()["tasks"] == 7
    assert probe.snapshot(True)["tasks"] == 7
    assert len(walks) == 2


@pytest.mark.parametrize(
    ("name", "transport"),
    [("trimcp", "memory"), ("floor", "memory"), ("sdk", "memory"), ("raw-trimcp", "stdio")],
)
def test_every_server_counts_tasks_only_when_asked(name: str, transport: str) -> None:
    impl = load(name)
    driver = impl.drivers[transport]()

    async def main() -> list[dict[str, Any]]:
        async with driver.connect(Workload()) as target:
            assert target.stats is not None
            return [await target.stats(False), await target.stats(True)]

    light, full = impl.runtime.run(main)
    assert light["tasks"] is None
    assert isinstance(full["tasks"], int)
    assert full["tasks"] > 0
    assert light["entered"] == full["entered"] == 0

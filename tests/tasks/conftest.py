"""Every tasks test runs on the autojump clock: TTLs and poll intervals take no wall time."""

from __future__ import annotations

import pytest
import trio.testing


@pytest.fixture(autouse=True)
def autojump_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)

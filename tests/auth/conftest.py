"""Authorization tests run on a mock clock unless they say otherwise."""

from __future__ import annotations

import pytest
import trio
import trio.testing


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)

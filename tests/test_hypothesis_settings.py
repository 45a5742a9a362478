"""The suite's Hypothesis settings (tests/conftest.py): no wall-clock deadline."""

from __future__ import annotations

from hypothesis import settings


def test_properties_run_without_a_wall_clock_deadline() -> None:
    assert settings.default.deadline is None

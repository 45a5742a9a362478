"""The HTTP engines ``serve_http`` runs on: tests that start it run once per engine."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["h11", "hypercorn"])
def engine(request: pytest.FixtureRequest) -> str:
    """The ``engine`` argument of ``trimcp.serve_http`` for this run of the test."""
    value: str = request.param
    return value

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._services import RedisServer

_prefixes = itertools.count(1)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(Path(tmp_path_factory.mktemp("redis")))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def prefix() -> str:
    """Keys of one test: apart from every other test's in the same redis-server."""
    return f"t{next(_prefixes)}:"

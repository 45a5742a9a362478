"""Stores: where an MCP server's sessions, events, tasks and subscriptions live.

:class:`MemoryStore` (the default) keeps them in this process. :class:`RedisStore`
(``pip install 'trimcp[redis]'``) shares them between processes behind a load
balancer; it is imported on first use, so the core never needs coredis.
"""

from typing import TYPE_CHECKING, Any

from ._base import MemoryStore as MemoryStore
from ._base import SharedStore as SharedStore
from ._base import Store as Store
from ._base import is_shared as is_shared
from ._base import open_store as open_store

if TYPE_CHECKING:
    from ._redis import RedisStore as RedisStore

__all__ = ["MemoryStore", "RedisStore", "SharedStore", "Store", "is_shared", "open_store"]


def __getattr__(name: str) -> Any:
    if name == "RedisStore":
        from ._redis import RedisStore

        return RedisStore
    raise AttributeError(name)

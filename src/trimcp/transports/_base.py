"""How a client reaches a server: something that opens a message channel."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from trimcp.nursery import MessageChannel

__all__ = ["ClientTransport"]


class ClientTransport(Protocol):
    """Opens a channel to a server for the duration of an ``async with`` block.

    Leaving the block releases everything it opened (the child process, the
    connections, the in-memory server's session), within bounded time.
    """

    def connect(self) -> AbstractAsyncContextManager[MessageChannel]: ...

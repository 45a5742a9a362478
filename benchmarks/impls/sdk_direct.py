"""The SDK's direct in-process path (``mode="auto"``: no streams, no JSON-RPC)."""

from __future__ import annotations

import dataclasses

from benchmarks.impls.sdk_impl import IMPLEMENTATION as _LEGACY
from benchmarks.impls.sdk_impl import InMemoryDriver

IMPLEMENTATION = dataclasses.replace(
    _LEGACY,
    name="sdk-direct",
    description="mcp SDK MCPServer + Client(mode='auto'): DirectDispatcher, no streams",
    drivers={"memory": lambda: InMemoryDriver(mode="auto")},
)

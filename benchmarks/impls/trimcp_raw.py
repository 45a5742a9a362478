"""trimcp without client-side result conversion (``Client.request`` returns the dict)."""

from __future__ import annotations

import dataclasses

from benchmarks.impls.trimcp_impl import IMPLEMENTATION as _TYPED
from benchmarks.impls.trimcp_impl import HttpDriver, InMemoryDriver

IMPLEMENTATION = dataclasses.replace(
    _TYPED,
    name="trimcp-raw",
    description="trimcp in memory, Client.request('tools/call') returning the raw dict",
    drivers={"memory": lambda: InMemoryDriver(raw=True), "http": lambda: HttpDriver(raw=True)},
)

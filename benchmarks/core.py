"""The interfaces an implementation under test provides.

An :class:`Implementation` names an MCP stack (or the raw floor), the async runtime it
runs on, and one :class:`Driver` per transport it supports. A driver knows how to stand
up a connected client/server pair and hand back a :data:`Caller` that performs one
``tools/call`` round trip. Metrics are written against drivers only, so adding a
transport (stdio, HTTP) means adding a driver, and adding a metric (memory per
in-flight request, cancellation latency) means adding a module under
:mod:`benchmarks.metrics`; neither touches the other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from benchmarks.runtimes import Runtime

#: One complete ``tools/call`` round trip; raises if the call failed.
Caller = Callable[[], Awaitable[None]]

#: The tool every implementation serves: returns its ``text`` argument as text content.
TOOL_NAME = "echo"


@dataclass(frozen=True)
class Workload:
    """What each call sends, and the server-side knobs every driver must honour.

    Attributes:
      payload_bytes: length of the ``text`` argument echoed back.
      server_max_in_flight: inbound requests a server handles at once, for servers that
        bound it (trimcp); ``None`` keeps the implementation's default.
    """

    payload_bytes: int = 16
    server_max_in_flight: int | None = None

    @property
    def text(self) -> str:
        return ("x" * self.payload_bytes)[: self.payload_bytes]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Driver(Protocol):
    """Stands up one client/server pair over one transport."""

    def connect(self, workload: Workload) -> AbstractAsyncContextManager[Caller]:
        """Connect (handshake included) and yield a caller; tear down on exit.

        The driver checks the first answer is the expected echo, so a benchmark never
        measures an implementation that returns errors quickly.
        """
        ...


@dataclass(frozen=True)
class Implementation:
    """An MCP stack under test."""

    name: str
    description: str
    runtime: Runtime
    drivers: Mapping[str, Callable[[], Driver]]
    #: Versions of the libraries involved, for the record.
    versions: Mapping[str, str] = field(default_factory=dict)


def check_echo(text: str, expected: str) -> None:
    """Fail loudly when an implementation answers something other than the echo."""
    if text != expected:
        raise AssertionError(f"echo returned {text[:80]!r}, expected {expected[:80]!r}")

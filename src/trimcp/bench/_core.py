"""The interfaces an implementation under test provides.

An :class:`Implementation` names an MCP stack (or the raw floor), the async runtime it
runs on, and one driver per transport it supports. A driver stands up a connected
client/server pair and yields a :class:`Target`: a ``tools/call`` round trip, and,
where the server is one of the benchmark servers (:mod:`._servers`), a parked call,
the server's counters and a reverse-call fan-out. Metrics are written against
targets only, so a transport is a new driver and a metric is a new module; neither
touches the other. A metric that needs what a target lacks returns a sample that
says so (``{"unsupported": reason}``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ._runtimes import Runtime

__all__ = [
    "FANOUT_TOOL",
    "PARK_TOOL",
    "SSE_TOOL",
    "STATS_TOOL",
    "TOOL_NAME",
    "TRIMCP_HTTP_CONNECTIONS",
    "Caller",
    "Driver",
    "Implementation",
    "Target",
    "Workload",
    "check_echo",
]

#: One complete ``tools/call`` round trip; raises if the call failed.
Caller = Callable[[], Awaitable[None]]

#: The tool every implementation serves: returns its ``text`` argument as text content.
TOOL_NAME = "echo"
#: Parks until cancelled, counting entries and observed cancellations.
PARK_TOOL = "park"
#: The echo whose answer is an SSE stream (a log notification first): trimcp only.
SSE_TOOL = "echo_sse"
#: Returns the server's counters as JSON text (see :class:`._probe.Probe`).
STATS_TOOL = "bench_stats"
#: Issues ``n`` concurrent ``sampling/createMessage`` calls, answers when all are back.
FANOUT_TOOL = "fanout"
#: Connections trimcp's HTTP client holds unless a workload asks for more (its default
#: pool); the floor's client under hypercorn holds as many.
TRIMCP_HTTP_CONNECTIONS = 32


@dataclass(frozen=True)
class Workload:
    """What each call sends, and the knobs every driver must honour.

    Attributes:
      payload_bytes: length of the ``text`` argument echoed back.
      server_max_in_flight: inbound requests a server handles at once, for servers that
        bound it (trimcp); ``None`` keeps the implementation's default.
      max_reverse_calls: outstanding reverse calls a handler may have, for servers
        that bound it; ``None`` keeps the default.
      connections: HTTP connections a client may open (the parked metric needs one
        per parked call); ``None`` keeps the client's default.
      cancel_send_timeout: how long a client that bounds its ``notifications/cancelled``
        sends (trimcp: 2 s) may take for each; ``None`` keeps its default. Over HTTP each
        is a POST on a fresh connection, and a thousand at once take longer than 2 s.
      server_command / url: the external target (stdio command, Streamable HTTP URL).
      tool / arguments: what an external target's call is (default: ``echo`` with
        the payload as ``text``).
      era: the protocol era the client speaks, ``handshake`` or ``stateless``
        (:mod:`._era`).
    """

    payload_bytes: int = 16
    server_max_in_flight: int | None = None
    max_reverse_calls: int | None = None
    connections: int | None = None
    cancel_send_timeout: float | None = None
    server_command: tuple[str, ...] = ()
    url: str = ""
    tool: str = TOOL_NAME
    arguments: Mapping[str, Any] | None = None
    era: str = "handshake"

    @property
    def text(self) -> str:
        return "x" * self.payload_bytes

    def call_arguments(self) -> dict[str, Any]:
        return dict(self.arguments) if self.arguments is not None else {"text": self.text}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Workload:
        values = dict(data)
        values["server_command"] = tuple(values.get("server_command", ()))
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["server_command"] = list(self.server_command)
        return data


@dataclass
class Target:
    """A connected client/server pair, as metrics see it.

    Attributes:
      call: one ``tools/call`` round trip.
      park: one call to the park tool; returns only by being cancelled.
      stats: the server's counters (:meth:`._probe.Probe.snapshot`; its argument says
        whether to count the server's live tasks too).
      fanout: one call whose handler issues ``n`` concurrent sampling calls.
    """

    call: Caller
    park: Callable[[], Awaitable[Any]] | None = None
    stats: Callable[[bool], Awaitable[dict[str, Any]]] | None = None
    fanout: Callable[[int], Awaitable[None]] | None = None


class Driver(Protocol):
    """Stands up one client/server pair over one transport."""

    def connect(self, workload: Workload) -> AbstractAsyncContextManager[Target]:
        """Connect (handshake included) and yield a target; tear down on exit.

        The driver checks the first answer is the expected echo, so a benchmark never
        measures an implementation that returns errors quickly.
        """
        ...


@dataclass(frozen=True)
class Implementation:
    """An MCP stack under test.

    ``metrics`` names the metrics it is meant for (``None``: all); a variant that
    differs from another only in how it parks (JSON or SSE response mode) has
    ``("parked",)``. ``absent`` says, per transport the stack itself lacks, why: the
    report shows it where figures would be.
    """

    name: str
    description: str
    runtime: Runtime
    drivers: Mapping[str, Callable[[], Driver]]
    versions: Mapping[str, str] = field(default_factory=dict)
    metrics: tuple[str, ...] | None = None
    absent: Mapping[str, str] = field(default_factory=dict)


def check_echo(text: object, expected: str) -> None:
    """Fail loudly when an implementation answers something other than the echo."""
    if text != expected:
        raise AssertionError(f"echo returned {str(text)[:80]!r}, expected {expected[:80]!r}")


async def tool_target(
    call_tool: Callable[[str, dict[str, Any]], Awaitable[Any]],
    text_of: Callable[[Any], str],
    workload: Workload,
) -> Target:
    """Check one echo through ``call_tool``, then return the target built on it.

    trimcp's and the SDK's clients share this shape: ``call_tool(name, arguments)``
    returns a result with ``is_error``; ``text_of`` reads its first text block.
    """
    text = workload.text
    arguments = {"text": text}
    check_echo(text_of(await call_tool(TOOL_NAME, arguments)), text)

    async def call() -> None:
        if (await call_tool(TOOL_NAME, arguments)).is_error:
            raise AssertionError("tool failed")

    async def park() -> None:
        await call_tool(PARK_TOOL, {})

    async def stats(tasks: bool = True) -> dict[str, Any]:
        arguments = {"tasks": tasks}
        answer: dict[str, Any] = json.loads(text_of(await call_tool(STATS_TOOL, arguments)))
        return answer

    async def fanout(n: int) -> None:
        if (await call_tool(FANOUT_TOOL, {"n": n})).is_error:
            raise AssertionError("fanout failed")

    return Target(call, park, stats, fanout)

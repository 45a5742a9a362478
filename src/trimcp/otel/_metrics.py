"""The metric instruments: the MCP conventions' four histograms and trimcp's gauges.

Histograms (seconds, with the bucket boundaries the conventions advise):
``mcp.server.operation.duration`` / ``mcp.client.operation.duration`` per request, and
``mcp.server.session.duration`` / ``mcp.client.session.duration`` per session. An
operation on the server side is an inbound request (a client's call, or on a client
the server's reverse call); on the client side an outbound one.

trimcp's own: ``trimcp.requests.in_flight`` and ``trimcp.requests.queued`` (observable
gauges over the live sessions: handlers running, requests waiting for a slot),
``trimcp.requests.cancelled`` and ``trimcp.requests.errors`` (counters, by method and,
for errors, ``error.type``; ``trimcp.direction`` is ``inbound`` or ``outbound``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any, Final, final

from opentelemetry.metrics import CallbackOptions, Meter, Observation

from trimcp.nursery import Role, Session

__all__ = ["DURATION_BUCKETS", "Instruments"]

#: The boundaries the conventions advise for every MCP duration histogram.
DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

DIRECTION: Final = "trimcp.direction"
ROLE: Final = "trimcp.role"


@final
class Instruments:
    """Every instrument, made once per :class:`~trimcp.otel.Telemetry`."""

    def __init__(self, meter: Meter, sessions: weakref.WeakKeyDictionary[Session, Any]) -> None:
        self._sessions = sessions

        def histogram(name: str, description: str) -> Any:
            return meter.create_histogram(
                name,
                unit="s",
                description=description,
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )

        self.operation = {
            Role.SERVER: histogram(
                "mcp.server.operation.duration",
                "MCP request duration as observed on the receiver, from the time it was "
                "received until the result is sent.",
            ),
            Role.CLIENT: histogram(
                "mcp.client.operation.duration",
                "The duration of the MCP request as observed on the sender, from the time it "
                "was sent until the response is received.",
            ),
        }
        self.session = {
            Role.SERVER: histogram(
                "mcp.server.session.duration",
                "The duration of the MCP session as observed on the MCP server.",
            ),
            Role.CLIENT: histogram(
                "mcp.client.session.duration",
                "The duration of the MCP session as observed on the MCP client.",
            ),
        }
        self.cancelled = meter.create_counter(
            "trimcp.requests.cancelled", unit="{request}", description="Requests cancelled."
        )
        self.errors = meter.create_counter(
            "trimcp.requests.errors",
            unit="{request}",
            description="Requests that ended with an error (or a tool error result).",
        )
        meter.create_observable_gauge(
            "trimcp.requests.in_flight",
            callbacks=[self._in_flight],
            unit="{request}",
            description="Inbound requests whose handlers are running.",
        )
        meter.create_observable_gauge(
            "trimcp.requests.queued",
            callbacks=[self._queued],
            unit="{request}",
            description="Inbound requests read and waiting for an in-flight slot.",
        )

    def _in_flight(self, _options: CallbackOptions) -> Iterable[Observation]:
        return self._sum(lambda session: session.in_flight)

    def _queued(self, _options: CallbackOptions) -> Iterable[Observation]:
        return self._sum(lambda session: session.queued)

    def _sum(self, count: Any) -> list[Observation]:
        totals = {Role.SERVER: 0, Role.CLIENT: 0}
        for session in list(self._sessions):
            totals[session.role] += count(session)
        return [Observation(n, {ROLE: role.value}) for role, n in totals.items()]

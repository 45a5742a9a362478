"""OpenTelemetry for trimcp: a span per request on both sides, trace context in
``_meta``, and the MCP conventions' metrics (``pip install 'trimcp[otel]'``).

Example::

    telemetry = trimcp.otel.Telemetry()          # the global providers and propagator
    telemetry.instrument(server.middlewares)     # every session the server serves
    client_side = telemetry.instrument(trimcp.Middlewares())
    async with trimcp.open_client(transport, middlewares=client_side) as client:
        ...

Only ``opentelemetry-api`` is needed; without an SDK configured every span and
instrument is the API's no-op. Nothing is imported or done unless this package is.
"""

from ._metrics import DURATION_BUCKETS as DURATION_BUCKETS
from ._telemetry import Outcome as Outcome
from ._telemetry import Telemetry as Telemetry

__all__ = ["DURATION_BUCKETS", "Outcome", "Telemetry"]

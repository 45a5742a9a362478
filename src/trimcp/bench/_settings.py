"""Settings of one benchmark invocation (recorded next to the samples)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ._core import Workload
from ._era import DEFAULT_ERA

__all__ = ["DEFAULT_LEVELS", "METRIC_ORDER", "Settings"]

#: Calls in flight per transport. Over HTTP the raw client holds a connection per
#: caller, and 10 000 sockets say more about the OS than about the stack. Over
#: WebSocket one connection carries every call, as a pipe does over stdio: 10 000 in
#: flight are 10 000 pending requests on one socket, and every stack sustains them
#: (measured: calls/s at 10 000 are 0.7x-0.85x of those at 1000), so it goes to 10 000.
DEFAULT_LEVELS = {
    "memory": (1, 10, 100, 1000, 10000),
    "stdio": (1, 10, 100, 1000, 10000),
    "http": (1, 10, 100, 1000),
    "websocket": (1, 10, 100, 1000, 10000),
}
METRIC_ORDER = ("throughput", "parked", "fanout")
#: Server tasks the parked metric's leak check allows over HTTP beyond the count before:
#: one per connection a client keeps alive beyond those it had (trimcp's keeps 8 idle).
HTTP_TASK_SLACK = 16


@dataclass(frozen=True)
class Settings:
    """Attributes:
    transports: transports measured, in order.
    eras: protocol eras measured on each transport, in order (:data:`._era.ERAS`).
    implementations: per transport, names from :data:`._registry.REGISTRY`.
    metrics: metrics measured (:data:`METRIC_ORDER`).
    levels: per transport, calls in flight (closed-loop callers) per throughput level.
    repeats: runs per (implementation, level); figures are their median.
    warmup / duration: seconds of load before / inside the throughput window.
    parked: calls parked at once for memory and cancellation (``parked`` metric).
    fanout: concurrent sampling calls one handler issues (``fanout`` metric).
    server_max_in_flight: ``"match"`` sets servers that bound inbound requests
      (trimcp, default 100; over HTTP its session's ``inbound_queue`` too) to at least
      the level, so every call really is in flight;
      ``"default"`` keeps their defaults.
    workload: payload size and the external target's command or URL and call.
    baseline: a source tree of another trimcp version; implementations named
      ``NAME@base`` run from it (see :meth:`._runner.Worker.start`).
    gc: the garbage collector of every process, ``"tuned"`` (:func:`trimcp.tune_gc`)
      or ``"default"`` (CPython's settings); see :mod:`._gc`.
    """

    transports: tuple[str, ...]
    implementations: dict[str, tuple[str, ...]]
    metrics: tuple[str, ...] = METRIC_ORDER
    levels: dict[str, tuple[int, ...]] = field(default_factory=lambda: dict(DEFAULT_LEVELS))
    repeats: int = 3
    warmup: float = 1.0
    duration: float = 2.0
    parked: int = 1000
    fanout: int = 100
    timeout: float = 30.0
    server_max_in_flight: str = "match"
    workload: Workload = field(default_factory=Workload)
    eras: tuple[str, ...] = (DEFAULT_ERA,)
    baseline: str | None = None
    gc: str = "tuned"

    def points(self, transport: str, metric: str) -> tuple[int, ...]:
        """The x values of ``metric``: levels, or the one parked / fan-out count."""
        if metric == "throughput":
            return self.levels[transport]
        return (self.parked,) if metric == "parked" else (self.fanout,)

    def command(
        self, transport: str, metric: str, point: int, era: str = DEFAULT_ERA
    ) -> dict[str, Any]:
        """The worker command for one run of ``metric`` at ``point`` in ``era``."""
        workload = self.workload.to_json()
        workload["era"] = era
        params: dict[str, Any] = {}
        if metric == "throughput":
            if self.server_max_in_flight == "match":
                workload["server_max_in_flight"] = max(100, point)
            params = {"concurrency": point, "warmup": self.warmup, "duration": self.duration}
        elif metric == "parked":
            workload["server_max_in_flight"] = point + 16
            workload["connections"] = point + 8
            workload["cancel_send_timeout"] = self.timeout
            slack = HTTP_TASK_SLACK if transport == "http" else 0
            params = {"parked": point, "timeout": self.timeout, "task_slack": slack}
        else:
            workload["max_reverse_calls"] = point
            params = {"fanout": point}
        return {"metric": metric, "transport": transport, "workload": workload, "params": params}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["workload"] = self.workload.to_json()
        return data

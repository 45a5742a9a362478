"""Settings of one harness invocation (what ``--json`` records next to the samples)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    """Attributes:
    implementations: names from :data:`benchmarks.impls.REGISTRY`, in display order.
    concurrency: calls in flight (closed-loop callers) per level.
    repeats: runs per (implementation, level); figures are their median.
    warmup / duration: seconds of load before / inside the measurement window.
    payload_bytes: length of the echoed text.
    server_max_in_flight: ``"match"`` sets servers that bound inbound requests
      (trimcp, default 100) to at least the level, so every call really is in flight;
      ``"default"`` keeps their defaults.
    """

    implementations: tuple[str, ...]
    concurrency: tuple[int, ...] = (1, 10, 100, 1000)
    repeats: int = 5
    warmup: float = 1.0
    duration: float = 3.0
    payload_bytes: int = 16
    server_max_in_flight: str = "match"
    transport: str = "memory"
    metric: str = "throughput"

    def command(self, level: int) -> dict[str, Any]:
        """The worker command for one run at ``level`` calls in flight."""
        limit = max(100, level) if self.server_max_in_flight == "match" else None
        return {
            "metric": self.metric,
            "transport": self.transport,
            "workload": {"payload_bytes": self.payload_bytes, "server_max_in_flight": limit},
            "params": {"concurrency": level, "warmup": self.warmup, "duration": self.duration},
        }

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

"""The protocol properties the conformance machine checks, and the error it raises.

Each property gets its own :class:`Violation` subclass, so Hypothesis treats violations
of different properties as different bugs and shrinks (and reports) each on its own.
"""

from __future__ import annotations

import functools

__all__ = ["PROPERTIES", "Violation", "violation"]

#: Property name -> what it requires (the text reports show).
PROPERTIES: dict[str, str] = {
    "one-response": "every request gets exactly one response (at most one once cancelled); "
    "notifications and responses get none",
    "ids": "responses carry the id of a request in flight: ids never cross or repeat",
    "error-codes": "errors carry the code the failure calls for (-32700, -32600, -32601, -32602)",
    "session-survives": "invalid input never ends the session: the next ping is still answered",
    "initialization": "before initialization completes the server sends only pings, "
    "log messages and responses",
    "capabilities": "the server uses only what was negotiated, and serves what it declared",
    "pagination": "list cursors lead to further pages and end; an invalid cursor is -32602",
    "schema": "every message the server sends validates against the negotiated revision",
    "progress": "progress refers to a request in flight and increases with every notification",
    "cancellation": "cancelled work stops: no progress for it once the cancellation is processed",
    "http": "Streamable HTTP statuses: 202 only for notifications and responses, no 5xx",
    "disconnect": "closing the connection ends the session",
}


class Violation(AssertionError):
    """A property the server broke; ``property`` names it (a key of :data:`PROPERTIES`)."""

    property = "unknown"

    def __init__(self, detail: str) -> None:
        super().__init__(f"[{self.property}] {detail}")
        self.detail = detail


@functools.cache
def violation_type(name: str) -> type[Violation]:
    """The :class:`Violation` subclass of property ``name``."""
    if name not in PROPERTIES:
        raise KeyError(name)
    title = "".join(part.capitalize() for part in name.split("-")) + "Violation"
    return type(title, (Violation,), {"property": name, "__module__": __name__})


def violation(name: str, detail: str) -> Violation:
    """A violation of property ``name`` (raise it)."""
    return violation_type(name)(detail)

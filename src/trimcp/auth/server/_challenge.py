"""``WWW-Authenticate`` challenges (RFC 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1).

Parameter values are quoted strings; a value that could break out of its quotes (a
``"`` or ``\\``) or carry a control character has those replaced, so nothing a client
sent can shape the header.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["challenge", "quote"]


def quote(value: str) -> str:
    """``value`` as a quoted-string, with anything that could escape it replaced."""
    cleaned = "".join(c if c.isprintable() and c not in '"\\' else "'" for c in value)
    return f'"{cleaned}"'


def challenge(scheme: str, params: Iterable[tuple[str, str | None]]) -> tuple[bytes, bytes]:
    """One ``WWW-Authenticate`` header: ``scheme`` with the parameters not ``None``."""
    parts = [f"{name}={quote(value)}" for name, value in params if value is not None]
    text = scheme + (" " + ", ".join(parts) if parts else "")
    return b"www-authenticate", text.encode("latin-1", "replace")

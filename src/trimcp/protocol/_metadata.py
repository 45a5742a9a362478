"""Descriptive metadata shared by many MCP objects: icons, annotations, implementation info."""

from __future__ import annotations

from typing import Literal, final

import attrs

from ._common import Role

__all__ = ["Annotations", "Icon", "Implementation"]


@final
@attrs.frozen(kw_only=True)
class Icon:
    """An icon a client may display (2025-11-25+). ``src`` is an ``https:`` or ``data:`` URI."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


@final
@attrs.frozen(kw_only=True)
class Annotations:
    """Hints on how to use or display an object. ``priority`` lies in [0, 1]."""

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None  # ISO 8601; 2025-06-18+


@final
@attrs.frozen(kw_only=True)
class Implementation:
    """Name and version of an MCP client or server (``clientInfo`` / ``serverInfo``).

    ``title`` is 2025-06-18+; ``website_url``, ``icons`` and ``description`` are 2025-11-25+.
    Self-reported: never a basis for security decisions.
    """

    name: str
    version: str
    title: str | None = None
    website_url: str | None = None
    icons: list[Icon] | None = None
    description: str | None = None

"""Roots: the directories or files a client exposes to a server (``roots/list``)."""

from __future__ import annotations

from typing import Any, final

import attrs

__all__ = ["ListRootsResult", "Root"]


@final
@attrs.frozen(kw_only=True)
class Root:
    """A root; ``uri`` must be a ``file://`` URI."""

    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = None


@final
@attrs.frozen(kw_only=True)
class ListRootsResult:
    """The client's answer to ``roots/list``."""

    roots: list[Root]
    meta: dict[str, Any] | None = None

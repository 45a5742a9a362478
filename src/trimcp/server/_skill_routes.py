"""The skills half of :class:`~trimcp.server.Server` (SEP-2640): registration and methods.

``Server`` inherits :class:`SkillRoutes`. Once a skill is added the server declares the
extension, ``{"io.modelcontextprotocol/skills": {"directoryRead": true}}``, in both eras
(and the ``resources`` capability, since skill files are read with ``resources/read``),
and answers:

* ``skills/list``: the entries, paginated like every list (an entry is never split);
* ``skills/get``: one entry by its ``SKILL.md`` URI; any other URI is ``-32602``;
* ``resources/directory/read``: the direct children of a directory resource (files
  with their metadata, subdirectories as ``inode/directory``), paginated; a URI that is
  not a directory is ``-32602``.

Without a skill these methods are ``-32601``. Stateless-era ``skills/list`` and
``skills/get`` results carry the cache hints, as the other lists do.
"""

from __future__ import annotations

import os
from typing import Any

from trimcp.binding import unstructure
from trimcp.dispatch import McpError, RequestHandler
from trimcp.nursery import HandlerContext
from trimcp.protocol import SKILLS_EXTENSION
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND

from ._pagination import page_result, paginate
from ._skills import Skill, SkillRegistry

__all__ = ["SkillRoutes"]


def _uri(params: Any) -> str:
    uri = params.get("uri") if isinstance(params, dict) else None
    if not isinstance(uri, str):
        raise McpError(INVALID_PARAMS, "Invalid params: uri must be a string")
    return uri


class SkillRoutes:
    """Skill registration and handlers, mixed into ``Server``."""

    skills: SkillRegistry
    page_size: int

    # ------------------------------------------------------------------ registration
    def add_skill(
        self,
        skill: Skill | str | os.PathLike[str],
        *,
        path: str | None = None,
    ) -> Skill:
        """Serve a skill: a :class:`Skill`, or a directory read with
        :meth:`Skill.from_directory` (``path`` defaults to the directory's name).
        Returns the skill; ``ValueError`` when it breaks the extension's rules."""
        if not isinstance(skill, Skill):
            skill = Skill.from_directory(skill, path=path)
        self.skills.add(skill)
        return skill

    def remove_skill(self, uri: str) -> None:
        """Stop serving the skill whose ``SKILL.md`` is at ``uri``."""
        self.skills.remove(uri)

    def skills_capability(self) -> dict[str, dict[str, Any]] | None:
        """The ``extensions`` this server declares for skills, if any."""
        return {SKILLS_EXTENSION: {"directoryRead": True}} if len(self.skills) else None

    # ------------------------------------------------------------------ handlers
    def skill_routes(self) -> dict[str, tuple[RequestHandler, type[Any] | None]]:
        """The extension's methods, their handlers and params types."""
        return {
            "skills/list": (self._list_skills, None),
            "skills/get": (self._get_skill, None),
            "resources/directory/read": (self._read_directory, None),
        }

    @staticmethod
    def _require_skills(ctx: HandlerContext) -> None:
        extensions = ctx.session.server_capabilities.extensions or {}
        if SKILLS_EXTENSION not in extensions:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")

    async def _list_skills(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        self._require_skills(ctx)
        cursor = params.get("cursor") if isinstance(params, dict) else None
        page, next_cursor = paginate("skills", self.skills.entries(), cursor, self.page_size)
        return page_result("skills", [entry.to_wire() for entry in page], next_cursor)

    async def _get_skill(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        self._require_skills(ctx)
        uri = _uri(params)
        entry = self.skills.entry(uri)
        if entry is None:
            raise McpError(
                INVALID_PARAMS, "Invalid params: not a skill this server serves", {"uri": uri}
            )
        return {"skill": entry.to_wire()}

    async def _read_directory(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        self._require_skills(ctx)
        uri = _uri(params)
        children = self.skills.children(uri)
        if children is None:
            raise McpError(INVALID_PARAMS, "Invalid params: not a directory resource", {"uri": uri})
        cursor = params.get("cursor")
        page, next_cursor = paginate("directory", children, cursor, self.page_size)
        return page_result("resources", [unstructure(r) for r in page], next_cursor)

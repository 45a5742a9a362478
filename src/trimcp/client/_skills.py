"""The skills half of :class:`~trimcp.client.Client` (SEP-2640): list, load, verify.

``Client`` inherits :class:`SkillCalls`. Every call checks that the server declared
``io.modelcontextprotocol/skills`` (else ``McpError(-32601)`` without a round trip).

What a host must do, and where it happens here:

* **No prefetch.** :meth:`~SkillCalls.list_skills` and :meth:`~SkillCalls.get_skill` read
  entries only; nothing of a skill is fetched until :meth:`~SkillCalls.load_skill`, and a
  supporting file only when :meth:`LoadedSkill.read` asks for it.
* **Entries are checked** (:class:`~trimcp.protocol.SkillEntry`): one breaking the rules
  is left out of a listing (named in :attr:`SkillList.rejected`) and refused by
  ``get_skill``. The limits (512 files, 16 MiB by default) are checked from the entry,
  before anything is read.
* **Nothing unverified is used.** A read whose byte length differs from the entry's
  ``size``, or whose SHA-256 differs from its ``digest``, raises
  :class:`SkillVerificationError` and its content is dropped; so does a ``SKILL.md``
  whose frontmatter differs in any field from the entry's, and a read of a file the
  entry does not list. A skill with ``"resources": "dynamic"`` is declined unless the
  caller allows it (its ``SKILL.md`` frontmatter is still compared).

Recovering from a stale entry is the caller's choice: ``get_skill`` returns the
current one, which is a different skill as far as any approval is concerned.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from typing import Any, final

import attrs

from trimcp.binding import structure
from trimcp.dispatch import McpError
from trimcp.nursery import Session
from trimcp.protocol import (
    MAX_SKILL_BYTES,
    MAX_SKILL_RESOURCES,
    SKILLS_EXTENSION,
    FrontmatterError,
    Resource,
    SkillEntry,
    SkillEntryError,
    parse_frontmatter,
    same_json,
    sha256_digest,
)
from trimcp.wire import METHOD_NOT_FOUND

from ._mrtr import InputRounds
from ._pages import all_pages

__all__ = ["DirectoryPage", "LoadedSkill", "SkillCalls", "SkillList", "SkillVerificationError"]


class SkillVerificationError(Exception):
    """A skill's content is not what its entry promised (or the entry is unusable)."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"{uri}: {reason}")
        self.uri = uri
        self.reason = reason


@final
@attrs.frozen
class SkillList:
    """One page of ``skills/list``: the valid entries, the cursor of the next page, and
    why each entry left out was refused."""

    skills: list[SkillEntry]
    next_cursor: str | None = None
    rejected: list[str] = attrs.Factory(list)


@final
@attrs.frozen
class DirectoryPage:
    """One page of ``resources/directory/read``."""

    resources: list[Resource]
    next_cursor: str | None = None


def _content_bytes(raw: dict[str, Any], uri: str) -> bytes:
    contents = raw.get("contents")
    items = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    item = next((c for c in items if c.get("uri") == uri), items[0] if items else None)
    if item is None:
        raise SkillVerificationError(uri, "the read returned no contents")
    if isinstance(item.get("text"), str):
        return str(item["text"]).encode("utf-8")
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True)
        except (binascii.Error, ValueError):
            raise SkillVerificationError(uri, "the blob is not base64") from None
    raise SkillVerificationError(uri, "the read returned neither text nor blob")


@final
class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified against :attr:`entry`.

    Made by :meth:`SkillCalls.load_skill`. :attr:`text` is the verified ``SKILL.md``;
    supporting files are read on demand with :meth:`read`, each verified the same way.
    """

    def __init__(self, calls: SkillCalls, entry: SkillEntry, text: str, budget: int) -> None:
        self._calls = calls
        self.entry = entry
        self.text = text
        self._budget = budget  # bytes a dynamic skill may still bring

    @property
    def name(self) -> str:
        return self.entry.name

    def resolve(self, path: str) -> str:
        """The URI of ``path``, relative to the skill's root (``references/FORMS.md``)."""
        normal = posixpath.normpath(path)
        if path.startswith("/") or normal == "." or normal.startswith(".."):
            raise SkillVerificationError(self.entry.uri, f"{path!r} is not inside the skill")
        return f"{self.entry.root}/{normal}"

    async def read(self, path: str) -> bytes:
        """The verified bytes of the skill file at ``path`` (relative to the root)."""
        uri = self.resolve(path)
        if self.entry.dynamic:
            data = await self._calls._read_skill_file(uri)
            self._budget -= len(data)
            if self._budget < 0:
                raise SkillVerificationError(uri, "the dynamic skill passed its size limit")
            return data
        return await self._calls._read_verified(self.entry, uri)

    async def read_text(self, path: str) -> str:
        """:meth:`read`, decoded as UTF-8."""
        return (await self.read(path)).decode("utf-8")


class SkillCalls:
    """Skill calls, mixed into ``Client``."""

    session: Session
    _rounds: InputRounds

    def skills_capability(self) -> dict[str, Any] | None:
        """The server's settings for the skills extension (``None``: not declared)."""
        extensions = self.session.state.server_capabilities.extensions or {}
        value = extensions.get(SKILLS_EXTENSION)
        return value if isinstance(value, dict) else None

    def _require_skills(self, *, directory: bool = False) -> None:
        capability = self.skills_capability()
        if capability is None:
            raise McpError(METHOD_NOT_FOUND, f"the server does not declare {SKILLS_EXTENSION}")
        if directory and capability.get("directoryRead") is not True:
            raise McpError(METHOD_NOT_FOUND, "the server does not declare directoryRead")

    async def list_skills(self, cursor: str | None = None) -> SkillList:
        """One page of ``skills/list``. Reads no skill file."""
        self._require_skills()
        raw = await self.session.request("skills/list", {"cursor": cursor} if cursor else {})
        items = raw.get("skills") if isinstance(raw, dict) else None
        skills: list[SkillEntry] = []
        rejected: list[str] = []
        for item in items if isinstance(items, list) else []:
            try:
                skills.append(SkillEntry.from_wire(item))
            except SkillEntryError as exc:
                rejected.append(str(exc))
        next_cursor = raw.get("nextCursor") if isinstance(raw, dict) else None
        return SkillList(skills, next_cursor if isinstance(next_cursor, str) else None, rejected)

    async def list_all_skills(self) -> list[SkillEntry]:
        """Every valid entry, following ``nextCursor`` (an empty list proves nothing:
        servers may list only some of their skills)."""
        return await all_pages("skills/list", self.list_skills, lambda page: page.skills)

    async def get_skill(self, uri: str) -> SkillEntry:
        """The current entry of the skill whose ``SKILL.md`` is at ``uri``
        (:class:`SkillVerificationError` when the server's entry breaks the rules)."""
        self._require_skills()
        raw = await self.session.request("skills/get", {"uri": uri})
        try:
            entry = SkillEntry.from_wire(raw.get("skill") if isinstance(raw, dict) else None)
        except SkillEntryError as exc:
            raise SkillVerificationError(uri, str(exc)) from None
        if entry.uri != uri:
            raise SkillVerificationError(uri, f"skills/get answered for {entry.uri}")
        return entry

    async def load_skill(
        self,
        skill: SkillEntry | str,
        *,
        allow_dynamic: bool = False,
        max_files: int = MAX_SKILL_RESOURCES,
        max_bytes: int = MAX_SKILL_BYTES,
    ) -> LoadedSkill:
        """Fetch and verify a skill's ``SKILL.md`` (module doc); a URI is looked up with
        :meth:`get_skill` first. ``max_files``/``max_bytes`` bound what is accepted."""
        entry = skill if isinstance(skill, SkillEntry) else await self.get_skill(skill)
        self._require_skills()
        if isinstance(entry.resources, str):
            if not allow_dynamic:
                raise SkillVerificationError(entry.uri, "dynamic skills are not verifiable")
            data = await self._read_skill_file(entry.uri)
            if len(data) > max_bytes:
                raise SkillVerificationError(entry.uri, f"larger than {max_bytes} bytes")
        else:
            total = sum(f.size for f in entry.resources)
            if len(entry.resources) > max_files or total > max_bytes:
                raise SkillVerificationError(
                    entry.uri,
                    f"{len(entry.resources)} files, {total} bytes: past the limits "
                    f"({max_files} files, {max_bytes} bytes)",
                )
            data = await self._read_verified(entry, entry.uri)
        try:
            text = data.decode("utf-8")
            frontmatter = parse_frontmatter(text)
        except (UnicodeDecodeError, FrontmatterError) as exc:
            raise SkillVerificationError(entry.uri, f"SKILL.md is unreadable: {exc}") from None
        differ = sorted(
            key
            for key in frontmatter.keys() | entry.frontmatter.keys()
            if not same_json(frontmatter.get(key), entry.frontmatter.get(key))
        )
        if differ:
            raise SkillVerificationError(
                entry.uri, f"the frontmatter differs from the entry's in {', '.join(differ)}"
            )
        return LoadedSkill(self, entry, text, max_bytes - len(data))

    async def read_directory(self, uri: str, cursor: str | None = None) -> DirectoryPage:
        """One page of ``resources/directory/read`` (needs ``directoryRead``). A live
        view: it never adds files to a loaded skill's entry."""
        self._require_skills(directory=True)
        params: dict[str, Any] = {"uri": uri}
        if cursor:
            params["cursor"] = cursor
        raw = await self.session.request("resources/directory/read", params)
        items = raw.get("resources") if isinstance(raw, dict) else None
        resources = [structure(r, Resource) for r in items] if isinstance(items, list) else []
        next_cursor = raw.get("nextCursor") if isinstance(raw, dict) else None
        return DirectoryPage(resources, next_cursor if isinstance(next_cursor, str) else None)

    # -- reads -------------------------------------------------------------------
    async def _read_skill_file(self, uri: str) -> bytes:
        raw = await self._rounds.request("resources/read", {"uri": uri})
        return _content_bytes(raw if isinstance(raw, dict) else {}, uri)

    async def _read_verified(self, entry: SkillEntry, uri: str) -> bytes:
        listed = entry.file(uri)
        if listed is None:
            raise SkillVerificationError(uri, "the skill's entry does not list this file")
        data = await self._read_skill_file(uri)
        if len(data) != listed.size:
            raise SkillVerificationError(uri, f"{len(data)} bytes, the entry says {listed.size}")
        if sha256_digest(data) != listed.digest:
            raise SkillVerificationError(uri, "the content does not match the entry's digest")
        return data

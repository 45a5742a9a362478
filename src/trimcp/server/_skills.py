"""Skills a server serves (SEP-2640): :class:`Skill` and the :class:`SkillRegistry`.

A :class:`Skill` is a skill path (``git-workflow``, ``acme/billing/refunds``) and the
skill's files, held in memory as bytes: the digests and sizes of its entry are computed
once, when it is made, so every ``skills/list`` answer and every read agree. It is
checked then too: a ``SKILL.md`` whose frontmatter has a ``name`` equal to the last
path segment (and valid under the Agent Skills naming rules) and a ``description``; file
paths that stay inside the skill; at most :data:`MAX_SKILL_RESOURCES` files and
:data:`MAX_SKILL_BYTES` in all (the limits every host must accept; a bigger skill is
refused with a :class:`ValueError` rather than served to hosts that may reject it).

The registry answers which URI is a skill file (``resources/read``), which is a
directory (``resources/directory/read``: every skill root, each subdirectory, and the
prefix directories of nested skill paths), and the ``SKILL.md`` resources that
``resources/list`` shows (named and described from the frontmatter).
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, final

from trimcp.protocol import (
    DIRECTORY_MIME_TYPE,
    MAX_SKILL_BYTES,
    MAX_SKILL_RESOURCES,
    SKILL_FILE,
    SKILL_MIME_TYPE,
    FrontmatterError,
    Resource,
    SkillEntry,
    SkillFile,
    parse_frontmatter,
    sha256_digest,
    valid_skill_name,
)

__all__ = ["Skill", "SkillRegistry"]

_TEXT_TYPES: Final = {".md": "text/markdown", ".py": "text/x-python", ".txt": "text/plain"}


def _mime_type(file_path: str) -> str:
    if file_path == SKILL_FILE:
        return SKILL_MIME_TYPE
    suffix = os.path.splitext(file_path)[1].lower()
    return (
        _TEXT_TYPES.get(suffix) or mimetypes.guess_type(file_path)[0] or "application/octet-stream"
    )


def _check_path(kind: str, path: str) -> list[str]:
    segments = path.split("/")
    if not path or any(s in ("", ".", "..") or "\\" in s for s in segments):
        raise ValueError(f"{kind} {path!r} must be a relative path of non-empty segments")
    return segments


@final
class Skill:
    """A skill: its path and its files (see the module doc).

    Args:
      path: the skill path; its last segment is the skill's name.
      files: file path (``/``-separated, relative to the skill root) to content;
        ``str`` is stored as UTF-8. ``SKILL.md`` is required.
      scheme: the URI scheme (``skill`` unless the server's domain has its own).
    """

    def __init__(
        self, path: str, files: Mapping[str, bytes | str], *, scheme: str = "skill"
    ) -> None:
        segments = _check_path("skill path", path)
        if not scheme.isascii() or not scheme.replace("+", "").replace("-", "").isalnum():
            raise ValueError(f"bad URI scheme {scheme!r}")
        data = {
            name: content.encode() if isinstance(content, str) else bytes(content)
            for name, content in files.items()
        }
        for file_path in data:
            _check_path("file path", file_path)
        if SKILL_FILE not in data:
            raise ValueError(f"skill {path!r} has no {SKILL_FILE}")
        _check_limits(path, len(data), sum(len(b) for b in data.values()))
        try:
            frontmatter = parse_frontmatter(data[SKILL_FILE].decode("utf-8"))
        except (UnicodeDecodeError, FrontmatterError) as exc:
            raise ValueError(f"skill {path!r}: {SKILL_FILE}: {exc}") from None
        name, description = frontmatter.get("name"), frontmatter.get("description")
        if not isinstance(name, str) or not valid_skill_name(name) or name != segments[-1]:
            raise ValueError(
                f"skill {path!r}: frontmatter name {name!r} must be a valid skill name equal "
                "to the last segment of the skill path"
            )
        if not isinstance(description, str) or not description:
            raise ValueError(f"skill {path!r}: frontmatter needs a non-empty description")
        self.path = path
        self.root = f"{scheme}://{path}"
        self.frontmatter = frontmatter
        self.files = data
        order = [SKILL_FILE, *sorted(n for n in data if n != SKILL_FILE)]
        self.entry = SkillEntry(
            f"{self.root}/{SKILL_FILE}",
            frontmatter,
            tuple(
                SkillFile(f"{self.root}/{n}", sha256_digest(data[n]), len(data[n])) for n in order
            ),
        )

    @property
    def uri(self) -> str:
        """The URI of the skill's ``SKILL.md``."""
        return self.entry.uri

    @classmethod
    def from_directory(
        cls, directory: str | os.PathLike[str], *, path: str | None = None, scheme: str = "skill"
    ) -> Skill:
        """The skill in ``directory`` (its regular files; symbolic links are left out,
        so nothing outside the directory is served). ``path`` defaults to the
        directory's name. Reading stops with a ``ValueError`` as soon as the limits are
        passed."""
        root = Path(directory)
        files: dict[str, bytes] = {}
        total = 0
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) / d).is_symlink())
            for filename in sorted(filenames):
                full = Path(dirpath) / filename
                if full.is_symlink() or not full.is_file():
                    continue
                total += full.stat().st_size
                _check_limits(path or root.name, len(files) + 1, total)
                files[full.relative_to(root).as_posix()] = full.read_bytes()
        return cls(path or root.name, files, scheme=scheme)

    def contents(self, file_path: str) -> dict[str, Any]:
        """The ``resources/read`` contents item of one file: ``text`` when the bytes are
        UTF-8 (the digest covers exactly them), else a base64 ``blob``."""
        data = self.files[file_path]
        item: dict[str, Any] = {
            "uri": f"{self.root}/{file_path}",
            "mimeType": _mime_type(file_path),
        }
        try:
            item["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            item["blob"] = base64.b64encode(data).decode("ascii")
        return item


def _check_limits(path: str, count: int, size: int) -> None:
    if count > MAX_SKILL_RESOURCES:
        raise ValueError(f"skill {path!r} has more than {MAX_SKILL_RESOURCES} files")
    if size > MAX_SKILL_BYTES:
        raise ValueError(f"skill {path!r} is larger than {MAX_SKILL_BYTES} bytes")


@final
class SkillRegistry:
    """The skills of one server, indexed by file and directory URI (module doc)."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change
        self._skills: dict[str, Skill] = {}
        self._files: dict[str, tuple[Skill, str]] = {}
        self._dirs: dict[str, dict[str, bool]] = {}

    def __len__(self) -> int:
        return len(self._skills)

    def add(self, skill: Skill) -> None:
        """Serve ``skill`` (one at the same ``SKILL.md`` URI is replaced)."""
        self._skills[skill.uri] = skill
        self._reindex()

    def remove(self, uri: str) -> None:
        """Stop serving the skill whose ``SKILL.md`` is at ``uri`` (``KeyError`` if none)."""
        del self._skills[uri]
        self._reindex()

    def _reindex(self) -> None:
        files: dict[str, tuple[Skill, str]] = {}
        dirs: dict[str, dict[str, bool]] = {}
        for skill in self._skills.values():
            scheme = skill.root.partition("://")[0]
            for name in skill.files:
                files[f"{skill.root}/{name}"] = (skill, name)
                _add_path(dirs, scheme, [*skill.path.split("/"), *name.split("/")])
        self._files, self._dirs = files, dirs
        self._on_change()

    def entries(self) -> list[SkillEntry]:
        return [skill.entry for skill in self._skills.values()]

    def entry(self, uri: str) -> SkillEntry | None:
        skill = self._skills.get(uri)
        return skill.entry if skill is not None else None

    def read(self, uri: str) -> dict[str, Any] | None:
        """The ``resources/read`` result for a skill file (``None``: not one)."""
        found = self._files.get(uri)
        if found is None:
            return None
        skill, name = found
        return {"contents": [skill.contents(name)]}

    def skill_resources(self) -> list[Resource]:
        """The ``SKILL.md`` resources, for ``resources/list``."""
        return [
            Resource(
                uri=skill.uri,
                name=skill.entry.name,
                description=skill.entry.description,
                mime_type=SKILL_MIME_TYPE,
                size=len(skill.files[SKILL_FILE]),
            )
            for skill in self._skills.values()
        ]

    def children(self, uri: str) -> list[Resource] | None:
        """The direct children of directory ``uri`` (``None``: not a directory)."""
        entries = self._dirs.get(uri)
        if entries is None:
            return None
        return list(_children(self, uri, sorted(entries.items())))


def _children(
    registry: SkillRegistry, uri: str, entries: Iterable[tuple[str, bool]]
) -> Iterable[Resource]:
    for name, is_dir in entries:
        child = f"{uri}/{name}"
        if is_dir:
            yield Resource(uri=child, name=name, mime_type=DIRECTORY_MIME_TYPE)
            continue
        skill, file_path = registry._files[child]
        yield Resource(
            uri=child,
            name=name,
            mime_type=_mime_type(file_path),
            size=len(skill.files[file_path]),
        )


def _add_path(dirs: dict[str, dict[str, bool]], scheme: str, segments: list[str]) -> None:
    """Record every directory on the way to the file at ``segments`` (the first segment
    is the URI's authority, so the first directory is ``scheme://first``)."""
    current = f"{scheme}://{segments[0]}"
    for index, segment in enumerate(segments[1:], start=1):
        is_dir = index < len(segments) - 1
        children = dirs.setdefault(current, {})
        children[segment] = children.get(segment, False) or is_dir
        current = f"{current}/{segment}"

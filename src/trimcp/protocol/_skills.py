"""The skills extension ``io.modelcontextprotocol/skills`` (SEP-2640): its vocabulary.

A *skill* is a directory of files (at least a ``SKILL.md`` that opens with YAML
frontmatter holding ``name`` and ``description``) served file by file as resources,
conventionally at ``skill://<skill-path>/<file-path>``; the last segment of the skill
path is the skill's ``name``. A server that declares the extension answers
``skills/list`` and ``skills/get`` with *entries*: the ``SKILL.md`` URI, its frontmatter
rendered as JSON, and ``resources``, every file of the skill as ``{uri, digest, size}``
(``digest`` is ``sha256:<64 lowercase hex>`` of the raw bytes), or the string
``"dynamic"`` for a skill whose content cannot be digested ahead of time.

Frontmatter is read with a YAML 1.2 core-schema reading (``yes`` stays a string, dates
stay strings), so the JSON a server renders is what a host parsing the same file finds;
:func:`same_json` compares two JSON values with their types (``1 != true``).
PyYAML comes with the ``skills`` extra.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, final

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "DYNAMIC_RESOURCES",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_RESOURCES",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "SKILL_MIME_TYPE",
    "FrontmatterError",
    "SkillEntry",
    "SkillEntryError",
    "SkillFile",
    "parse_frontmatter",
    "same_json",
    "sha256_digest",
    "skill_name_of",
    "skill_root_of",
    "valid_skill_name",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
"""The extension's identifier (under ``capabilities.extensions``)."""
SKILL_FILE: Final = "SKILL.md"
SKILL_MIME_TYPE: Final = "text/markdown"
DIRECTORY_MIME_TYPE: Final = "inode/directory"
"""The ``mimeType`` of a directory resource (``resources/directory/read``)."""
DYNAMIC_RESOURCES: Final = "dynamic"
MAX_SKILL_RESOURCES: Final = 512
"""Files of one skill every host must accept (``SKILL.md`` included)."""
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024
"""Total size of one skill's files every host must accept, in bytes."""

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_FRONTMATTER = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class FrontmatterError(ValueError):
    """A ``SKILL.md`` without readable frontmatter (missing, not YAML, not a mapping)."""


class SkillEntryError(ValueError):
    """A skill entry that breaks the extension's rules: hosts must not load it."""


def sha256_digest(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``, as entries carry it."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def valid_skill_name(name: str) -> bool:
    """The Agent Skills naming rule: 1-64 of ``a-z0-9-``, no leading, trailing or
    doubled hyphen."""
    return _NAME.fullmatch(name) is not None


def skill_name_of(uri: str) -> str | None:
    """The skill name a ``.../<name>/SKILL.md`` URI carries (``None`` for other URIs)."""
    _, sep, rest = uri.partition("://")
    segments = [s for s in rest.split("/") if s] if sep else []
    if len(segments) < 2 or segments[-1] != SKILL_FILE:
        return None
    return segments[-2]


def skill_root_of(uri: str) -> str | None:
    """The skill's root directory URI (``SKILL.md`` URI without ``/SKILL.md``)."""
    suffix = "/" + SKILL_FILE
    return uri[: -len(suffix)] if skill_name_of(uri) is not None else None


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - the extra is part of the test setup
        raise FrontmatterError(
            "reading skill frontmatter needs PyYAML: pip install 'trimcp[skills]'"
        ) from exc
    return yaml


def _core_loader() -> type[Any]:
    """A safe loader with YAML 1.2 core-schema scalars only (see the module doc)."""
    yaml = _yaml()

    class CoreLoader(yaml.SafeLoader):  # type: ignore[misc,name-defined]
        yaml_implicit_resolvers: dict[str, Any] = {}  # noqa: RUF012 (PyYAML's own API)

    def resolver(tag: str, pattern: str, first: str | list[str]) -> None:
        CoreLoader.add_implicit_resolver(tag, re.compile(pattern, re.X), list(first))

    resolver("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
    resolver("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""])
    resolver("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+)$", "-+0123456789")
    resolver(
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$",
        "-+.0123456789",
    )

    def construct_int(loader: Any, node: Any) -> int:
        text = str(loader.construct_scalar(node))
        return int(text, 16) if text.startswith("0x") else int(text, 10)

    CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    return CoreLoader


_LOADER: type[Any] | None = None


def _check_json(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise FrontmatterError(f"frontmatter key {key!r} at {where} is not a string")
            _check_json(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise FrontmatterError(f"frontmatter value at {where} is not a finite number")
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise FrontmatterError(f"frontmatter value at {where} has no JSON form")


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a ``SKILL.md`` as a JSON object.

    Raises :class:`FrontmatterError` when the text does not open with a ``---`` block,
    the block is not YAML, its top level is not a mapping, or a value has no JSON form.
    """
    global _LOADER
    match = _FRONTMATTER.match(text[1:] if text.startswith("\ufeff") else text)
    if match is None:
        raise FrontmatterError("SKILL.md does not open with a --- delimited frontmatter block")
    yaml = _yaml()
    if _LOADER is None:
        _LOADER = _core_loader()
    try:
        value = yaml.load(match.group(1), Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {exc}") from None
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter is not a mapping")
    _check_json(value, "$")
    return value


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal, types included (``1`` is not ``true``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


@final
@dataclasses.dataclass(frozen=True)
class SkillFile:
    """One file of a skill as an entry lists it."""

    uri: str
    digest: str
    size: int

    def to_wire(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@final
@dataclasses.dataclass(frozen=True)
class SkillEntry:
    """What ``skills/list`` and ``skills/get`` say about one skill.

    ``resources`` is every file (``SKILL.md`` first when a server built it) or
    ``"dynamic"``. Read and written with :meth:`from_wire` / :meth:`to_wire`, which check
    the extension's rules (a dataclass, not an attrs class: the typed converter has no
    say in an entry's shape).
    """

    uri: str
    frontmatter: dict[str, Any]
    resources: tuple[SkillFile, ...] | Literal["dynamic"]

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        """The skill's root directory URI."""
        root = skill_root_of(self.uri)
        assert root is not None  # from_wire checked it
        return root

    @property
    def dynamic(self) -> bool:
        return self.resources == DYNAMIC_RESOURCES

    def file(self, uri: str) -> SkillFile | None:
        """The listed file at ``uri`` (``None``: not part of this entry)."""
        if isinstance(self.resources, str):
            return None
        return next((f for f in self.resources if f.uri == uri), None)

    def to_wire(self) -> dict[str, Any]:
        resources: Any = (
            self.resources
            if isinstance(self.resources, str)
            else [f.to_wire() for f in self.resources]
        )
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}

    @classmethod
    def from_wire(cls, raw: object) -> SkillEntry:
        """Check and read an entry; :class:`SkillEntryError` says what is wrong."""
        if not isinstance(raw, Mapping):
            raise SkillEntryError("a skill entry is not an object")
        uri = raw.get("uri")
        if not isinstance(uri, str) or skill_name_of(uri) is None:
            raise SkillEntryError(f"entry uri {uri!r} does not name a .../<name>/SKILL.md")
        frontmatter = raw.get("frontmatter")
        if not isinstance(frontmatter, dict):
            raise SkillEntryError(f"{uri}: frontmatter is missing or not an object")
        for key in ("name", "description"):
            if not isinstance(frontmatter.get(key), str) or not frontmatter[key]:
                raise SkillEntryError(f"{uri}: frontmatter.{key} is missing or empty")
        if frontmatter["name"] != skill_name_of(uri):
            raise SkillEntryError(f"{uri}: the last path segment is not frontmatter.name")
        return cls(uri, dict(frontmatter), _resources(uri, raw.get("resources")))


def _resources(uri: str, raw: object) -> tuple[SkillFile, ...] | Literal["dynamic"]:
    if raw == DYNAMIC_RESOURCES:
        return DYNAMIC_RESOURCES
    if not isinstance(raw, list):
        raise SkillEntryError(f"{uri}: resources is neither a list nor {DYNAMIC_RESOURCES!r}")
    root = uri[: -len(SKILL_FILE)]
    files: list[SkillFile] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, Mapping):
            raise SkillEntryError(f"{uri}: a resources item is not an object")
        file_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(file_uri, str) or not file_uri.startswith(root) or file_uri in seen:
            raise SkillEntryError(f"{uri}: resource {file_uri!r} is outside the skill or repeated")
        if not isinstance(digest, str) or _DIGEST.fullmatch(digest) is None:
            raise SkillEntryError(f"{uri}: resource {file_uri} has a malformed digest")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise SkillEntryError(f"{uri}: resource {file_uri} has no valid size")
        seen.add(file_uri)
        files.append(SkillFile(file_uri, digest, size))
    if uri not in seen:
        raise SkillEntryError(f"{uri}: resources does not list the SKILL.md itself")
    return tuple(files)

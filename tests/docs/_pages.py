"""Reading the documentation pages: their fenced blocks and the snippet files they include."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"

FENCE = re.compile(
    r"^(?P<indent> *)(?P<fence>```+)(?P<lang>[\w+-]*)[^\n]*\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"\s*$')
MARKER = "--8<-- [{}:{}]"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def includes(self) -> list[tuple[str, str | None]]:
        """The ``(path, section)`` of each ``--8<--`` line; ``[]`` when the block has
        anything else in it (code written on the page itself)."""
        found = []
        for line in self.body.splitlines():
            if not line.strip():
                continue
            match = INCLUDE.match(line)
            if match is None:
                return []
            found.append((match["path"], match["section"]))
        return found


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if SNIPPETS not in p.parents)


def blocks(page: Path | None = None) -> list[Block]:
    found = []
    for path in [page] if page is not None else pages():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            body = "\n".join(
                line.removeprefix(match["indent"]) for line in match["body"].splitlines()
            )
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(path, line, match["lang"], body))
    return found


def included_text(path: str, section: str | None) -> str:
    """What ``--8<-- "path:section"`` puts on the page (marker lines left out)."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    if section is not None:
        start, end = MARKER.format("start", section), MARKER.format("end", section)
        first = next(i for i, line in enumerate(lines) if start in line)
        last = next(i for i, line in enumerate(lines) if end in line)
        lines = lines[first + 1 : last]
    return "\n".join(line for line in lines if "--8<-- [" not in line)


def snippet_files() -> list[Path]:
    """The files of ``docs/snippets/`` (not caches, nor what a run leaves behind)."""
    return sorted(
        p
        for p in SNIPPETS.rglob("*")
        if p.is_file()
        and p.suffix in (".py", ".txt")
        and not any(part.startswith((".", "__")) for part in p.relative_to(SNIPPETS).parts)
    )

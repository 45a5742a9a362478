"""Parameter descriptions from docstrings, in the three common styles.

- Google: an ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Attributes:``) section of
  ``name (type): text`` or ``name: text`` lines, continued by deeper-indented lines;
- Sphinx / reST: ``:param name: text`` (also ``:param type name: text``);
- NumPy: a ``Parameters`` (or ``Attributes``) heading underlined with dashes, then
  ``name : type`` lines with the text indented below.

Only descriptions are read (types come from annotations). Whatever does not parse is
ignored: a docstring is prose, never an error.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["param_docs"]

_GOOGLE_HEADS: Final = frozenset(
    ("args", "arguments", "parameters", "params", "attributes", "keyword args")
)
_NUMPY_HEADS: Final = frozenset(("parameters", "attributes", "other parameters"))
_SPHINX: Final = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_GOOGLE_ITEM: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM: Final = re.compile(r"^(\w+)\s*(?::.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def param_docs(doc: str | None) -> dict[str, str]:
    """``{name: description}`` for the parameters *doc* describes (any of the styles)."""
    if not doc:
        return {}
    lines = doc.expandtabs().splitlines()
    found: dict[str, str] = {}
    _sphinx(lines, found)
    _google(lines, found)
    _numpy(lines, found)
    return found


def _sphinx(lines: list[str], found: dict[str, str]) -> None:
    for i, line in enumerate(lines):
        match = _SPHINX.match(line)
        if match is None:
            continue
        parts = [match.group(2)]
        for more in lines[i + 1 :]:
            if not more.strip() or more.lstrip().startswith(":") or _indent(more) <= _indent(line):
                break
            parts.append(more)
        found.setdefault(match.group(1), _join(parts))


def _google(lines: list[str], found: dict[str, str]) -> None:
    i = 0
    while i < len(lines):
        head = lines[i].strip()
        i += 1
        if not head.endswith(":") or head[:-1].lower() not in _GOOGLE_HEADS:
            continue
        base = _indent(lines[i - 1])
        name: str | None = None
        item_indent = -1
        parts: list[str] = []
        while i < len(lines):
            line = lines[i]
            if line.strip() and _indent(line) <= base:
                break  # the section ended
            i += 1
            if not line.strip():
                continue
            match = _GOOGLE_ITEM.match(line.strip())
            if match is not None and (item_indent < 0 or _indent(line) <= item_indent):
                if name is not None:
                    found.setdefault(name, _join(parts))
                name, item_indent, parts = match.group(1).lstrip("*"), _indent(line), []
                parts.append(match.group(2))
            elif name is not None:
                parts.append(line)
        if name is not None:
            found.setdefault(name, _join(parts))


def _is_rule(line: str) -> bool:
    rule = line.strip()
    return bool(rule) and set(rule) == {"-"}


def _numpy(lines: list[str], found: dict[str, str]) -> None:
    for i in range(len(lines) - 1):
        if lines[i].strip().lower() not in _NUMPY_HEADS or not _is_rule(lines[i + 1]):
            continue
        base = _indent(lines[i])
        name: str | None = None
        parts: list[str] = []
        for j in range(i + 2, len(lines)):
            line = lines[j]
            if not line.strip():
                continue
            if _indent(line) > base:
                if name is not None:
                    parts.append(line)
                continue
            match = _NUMPY_ITEM.match(line.strip())
            if _indent(line) < base or match is None:
                break
            if j + 1 < len(lines) and _is_rule(lines[j + 1]):
                break  # the next section's heading
            if name is not None:
                found.setdefault(name, _join(parts))
            name, parts = match.group(1), []
        if name is not None:
            found.setdefault(name, _join(parts))

"""Render the Sphinx cross-reference roles of trimcp's docstrings as links.

trimcp's docstrings name other objects the Sphinx way (``:class:`Session```,
``:func:`~trimcp.open_client```, ``:mod:`._lifecycle```). mkdocstrings reads docstrings
as Markdown, where a role would show as it is written. This griffe extension rewrites
each role, once the package is loaded, into an *optional* autoref: a link when the
object it names is rendered somewhere on the site, plain code otherwise (a private
module, say), never a broken link or a build warning.

Names resolve as Sphinx resolves them: absolute (``trimcp.x.Y``), relative to the
module's package (``._lifecycle``, ``..dispatch``), or in the scope of the object whose
docstring holds the role (``Session``, ``Session.close``). ``~`` shows the last part
only.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:class|func|meth|mod|data|attr|exc|obj|const):`(?P<tilde>~)?(?P<target>[^`<>]+)`"
)
#: A reST literal block opener (``Example::``) at the end of a line.
LITERAL = re.compile(r"::$", re.MULTILINE)


def resolve(obj: griffe.Object, target: str) -> str:
    """The full path ``target`` names, seen from ``obj``'s docstring."""
    target = target.removesuffix("()")
    if target.startswith("."):
        module = obj.module
        base = module.path if module.is_init_module else module.path.rpartition(".")[0]
        dots = len(target) - len(target.lstrip("."))
        for _ in range(dots - 1):
            base = base.rpartition(".")[0]
        rest = target.lstrip(".")
        return f"{base}.{rest}" if rest else base
    if target.startswith("trimcp.") or target == "trimcp":
        return target
    head, _, tail = target.partition(".")
    try:
        full = obj.resolve(head) if obj.is_module or head not in obj.members else obj[head].path
    except (griffe.NameResolutionError, KeyError):
        return target
    return f"{full}.{tail}" if tail else full


def rewrite(obj: griffe.Object, text: str) -> str:
    """``text`` with every role made an optional autoref, and reST ``::`` made ``:``."""

    def link(match: re.Match[str]) -> str:
        target = match["target"].strip()
        shown = target.rpartition(".")[2] if match["tilde"] else target.lstrip(".")
        identifier = html.escape(resolve(obj, target), quote=True)
        code = f"<code>{html.escape(shown)}</code>"
        return f'<autoref identifier="{identifier}" optional>{code}</autoref>'

    return LITERAL.sub(":", ROLE.sub(link, text))


def _objects(obj: griffe.Object) -> Any:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring of a loaded package."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj, obj.docstring.value)

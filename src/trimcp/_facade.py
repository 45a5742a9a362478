"""Present the public names as members of the ``trimcp`` package.

The facade re-exports names defined in private modules (``trimcp.dispatch._errors``
...). Left alone, their ``__module__`` would show those paths in tracebacks, reprs and
documentation (``trimcp.dispatch._errors.McpError``), although users only ever import
``trimcp.McpError``. :func:`present_as` rewrites the metadata of each exported object
(and of the functions and classes defined in an exported class) to read
``trimcp.McpError``, ``trimcp.Client.call_tool``, as Trio does for its own package.

An attrs class has its annotations resolved first: resolving them later (the binding
does it lazily) looks names up in the module named by ``__module__``, which must still
be the module that defined them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

__all__ = ["present_as"]

_PREFIX = "trimcp."


def present_as(package: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Make each of ``names`` in ``namespace`` report ``package`` as its module."""
    seen: set[int] = set()
    for name in names:
        _present(package, namespace[name], name, name, seen)


def _present(package: str, obj: object, name: str, qualname: str, seen: set[int]) -> None:
    module = getattr(obj, "__module__", None)
    if id(obj) in seen or not isinstance(module, str) or not module.startswith(_PREFIX):
        return
    seen.add(id(obj))
    if isinstance(obj, type) and attrs.has(obj):
        try:
            attrs.resolve_types(obj, include_extras=True)
        except NameError:
            return  # resolvable only later, in its own module: leave it there
    try:
        obj.__module__ = package
        if getattr(obj, "__name__", None) == name:
            obj.__qualname__ = qualname  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # a read-only object: keep what it says
        return
    if isinstance(obj, type):
        for member, value in vars(obj).items():
            if not member.startswith("__"):
                _present(package, value, member, f"{qualname}.{member}", seen)

"""The griffe extension of the documentation site renders the Sphinx roles of trimcp's
docstrings as links to the objects they name."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

import griffe
import pytest

from ._pages import DOCS


def _extension() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sphinx_roles", DOCS / "_ext" / "sphinx_roles.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def package() -> Any:
    return griffe.load("trimcp", search_paths=[str(DOCS.parent / "src")])


def test_every_role_of_every_docstring_is_rewritten() -> None:
    ext = _extension()
    package = griffe.load(
        "trimcp",
        search_paths=[str(DOCS.parent / "src")],
        extensions=griffe.load_extensions(ext.SphinxRoles),
    )
    rewritten = 0
    for obj in ext._objects(package):
        text = obj.docstring.value if obj.docstring is not None else ""
        assert not ext.ROLE.search(text), f"{obj.path}: a role is left"
        rewritten += text.count("<autoref ")
    assert rewritten > 500


@pytest.mark.parametrize(
    ("where", "role", "identifier", "shown"),
    [
        (
            "trimcp.middleware",
            ":class:`RequestLogging`",
            "trimcp.middleware._logging.RequestLogging",
            "RequestLogging",
        ),
        ("trimcp.nursery._session", ":mod:`._inbound`", "trimcp.nursery._inbound", "_inbound"),
        (
            "trimcp.nursery._session",
            ":class:`~trimcp.dispatch.PendingTable`",
            "trimcp.dispatch.PendingTable",
            "PendingTable",
        ),
        (
            "trimcp.nursery._session.Session",
            ":meth:`Session.wait_closed`",
            "trimcp.nursery._session.Session.wait_closed",
            "Session.wait_closed",
        ),
        ("trimcp.nursery._session", ":func:`unknown_name`", "unknown_name", "unknown_name"),
    ],
)
def test_a_role_becomes_an_optional_autoref(
    where: str, role: str, identifier: str, shown: str
) -> None:
    ext = _extension()
    package = griffe.load("trimcp", search_paths=[str(DOCS.parent / "src")])
    obj = package[where.removeprefix("trimcp.")] if where != "trimcp" else package
    assert ext.rewrite(obj, role) == (
        f'<autoref identifier="{identifier}" optional><code>{shown}</code></autoref>'
    )


def test_a_rest_literal_block_opener_becomes_a_colon(package: Any) -> None:
    ext = _extension()
    assert ext.rewrite(package, "Example::\n\n    code") == "Example:\n\n    code"

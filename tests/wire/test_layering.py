"""wire/ is sans-IO and the bottom layer: no event loop, no sockets, no other trimcp subpackage."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

WIRE = Path(__file__).resolve().parents[2] / "src" / "trimcp" / "wire"
FORBIDDEN_ROOTS = {"trio", "anyio", "socket", "asyncio", "selectors", "ssl", "subprocess"}
MAX_MODULE_LINES = 300


def _modules() -> list[Path]:
    return sorted(WIRE.rglob("*.py"))


def _imports(source: str, package: list[str]) -> list[str]:
    """Absolute dotted names of everything ``source`` imports, anywhere in the module (function
    bodies and ``if TYPE_CHECKING:`` blocks included), with relative imports resolved against
    ``package``."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_there_are_modules_to_check() -> None:
    assert len(_modules()) >= 8


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_no_io_or_upward_imports(path: Path) -> None:
    package = ["trimcp", *path.relative_to(WIRE.parent).parent.parts]
    for name in _imports(path.read_text(encoding="utf-8"), package):
        root = name.split(".")[0]
        assert root not in FORBIDDEN_ROOTS, f"{path.name} imports {name}"
        if root == "trimcp":
            assert name.startswith("trimcp.wire"), f"{path.name} imports {name} (points up)"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_modules_are_small_and_private(path: Path) -> None:
    assert path.name == "__init__.py" or path.name.startswith("_")
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_MODULE_LINES


def test_the_checker_resolves_every_import_form() -> None:
    source = (
        "from .. import dispatch\n"
        "from ..nursery import x\n"
        "from . import _codec\n"
        "def f():\n"
        "    import trio.lowlevel\n"
    )
    names = _imports(source, ["trimcp", "wire"])
    assert names == [
        "trimcp",
        "trimcp.dispatch",
        "trimcp.nursery",
        "trimcp.nursery.x",
        "trimcp.wire",
        "trimcp.wire._codec",
        "trio.lowlevel",
    ]


def test_public_facade() -> None:
    import trimcp.wire as wire

    assert sorted(wire.__all__) == sorted(set(wire.__all__))
    for name in wire.__all__:
        assert hasattr(wire, name), name
    source = (WIRE / "__init__.py").read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name} must be re-exported as itself"
                assert alias.name in wire.__all__

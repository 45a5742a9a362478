"""protocol/ and binding/ import only what the layer order allows (design.md, "Layout")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent.parent / "src" / "trimcp"
ALLOWED_TRIMCP = {
    "protocol": {"trimcp.wire", "trimcp.protocol"},
    "binding": {"trimcp.wire", "trimcp.protocol", "trimcp.binding"},
}
FORBIDDEN_THIRD_PARTY = {"trio", "anyio", "socket", "asyncio", "h11", "wsproto", "hypercorn"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(ALLOWED_TRIMCP))
def test_layering(package: str) -> None:
    files = sorted((SRC / package).glob("*.py"))
    assert files
    for path in files:
        for name in _imports(path):
            root = name.split(".")[0]
            assert root not in FORBIDDEN_THIRD_PARTY, f"{path.name} imports {name}"
            if root == "trimcp":
                layer = ".".join(name.split(".")[:2])
                assert layer in ALLOWED_TRIMCP[package], f"{path.name} imports {name}"


@pytest.mark.parametrize("package", sorted(ALLOWED_TRIMCP))
def test_modules_are_small_and_private(package: str) -> None:
    for path in (SRC / package).glob("*.py"):
        assert path.name == "__init__.py" or path.name.startswith("_"), path.name
        assert len(path.read_text().splitlines()) <= 330, path.name

"""The layer order of the design holds: imports only point down, and wire/ does no I/O.

Order, bottom first: wire, protocol, binding, dispatch, nursery, transports, auth (it
implements what the transports ask of authorization, over their HTTP client), then server
and client (siblings, neither imports the other), then testing, otel, middleware and
bench, then the pytest plugin and cli. The top-level ``trimcp/__init__.py`` facade may
import anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "trimcp"
RANK = {
    "wire": 0,
    "protocol": 1,
    "binding": 2,
    "dispatch": 3,
    "nursery": 4,
    "transports": 5,
    "auth": 6,
    "server": 7,
    "client": 7,
    "testing": 8,
    "otel": 8,
    "middleware": 8,
    "pytest_plugin": 9,
    "bench": 8,
    "store": 6,  # shared state: below the server, above the transports it serves
    "cli": 9,  # the command line runs everything, the conformance machine included
}
NO_IO_IN_WIRE = {"trio", "anyio", "socket", "asyncio", "selectors", "ssl", "subprocess"}
MAX_LINES = 600


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p.parent != SRC)


def _layer(path: Path) -> str:
    return path.relative_to(SRC).parts[0]


def _imported(path: Path) -> list[str]:
    package = ["trimcp", *path.relative_to(SRC).parent.parts]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                names.append(".".join([*base, node.module] if node.module else base))
            else:
                names.append(node.module or "")
    return names


def test_every_subpackage_has_a_rank() -> None:
    layers = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert layers <= set(RANK), layers - set(RANK)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: Path) -> None:
    layer = _layer(path)
    for name in _imported(path):
        parts = name.split(".")
        if layer == "wire":
            assert parts[0] not in NO_IO_IN_WIRE, f"{path} imports {name}: wire/ is sans-IO"
        if parts[0] != "trimcp" or len(parts) < 2 or parts[1] == layer:
            continue
        target = parts[1]
        assert target in RANK, f"{path} imports {name}, which is not a layer"
        assert RANK[target] < RANK[layer], f"{path} ({layer}) imports {name}: points up or sideways"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_module_size_budget(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines; split it by concept"


def test_implementation_modules_are_private() -> None:
    public = [
        p
        for p in _modules()
        if p.name != "__init__.py" and p.name != "__main__.py" and not p.name.startswith("_")
    ]
    assert not public, f"implementation modules must start with _: {public}"


def test_tests_never_sleep_on_the_wall_clock() -> None:
    tests = Path(__file__).resolve().parent
    offenders = []
    for path in tests.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "sleep"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "time"
            ):
                offenders.append(f"{path}:{node.lineno}")
    assert not offenders, offenders

"""A task started with ``nursery.start`` reports ``task_status.started()`` once: a call
inside a loop of its body (unless under a condition that makes it the first time only)
raises ``RuntimeError`` on the loop's second turn, which may come a minute later, long
after every test has stopped watching. This checks the source for that shape."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "trimcp"


def _unguarded_starts(tree: ast.AST) -> list[int]:
    found: list[int] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, False)  # a new body: loops outside it do not repeat it
            elif isinstance(child, ast.If):
                visit(child, False)  # a condition may make it the first turn only
            elif isinstance(child, ast.While | ast.For | ast.AsyncFor):
                visit(child, True)
            else:
                call = child
                if (
                    in_loop
                    and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "started"
                    and isinstance(call.func.value, ast.Name)
                    and call.func.value.id == "task_status"
                ):
                    found.append(call.lineno)
                visit(child, in_loop)

    visit(tree, False)
    return found


def test_no_task_reports_started_on_every_turn_of_a_loop() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        for line in _unguarded_starts(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def test_the_check_finds_the_shape() -> None:
    bad = "async def f(task_status):\n    while True:\n        task_status.started()\n"
    good = (
        "async def f(task_status):\n    first = True\n    while True:\n"
        "        if first:\n            task_status.started()\n"
    )
    assert _unguarded_starts(ast.parse(bad)) == [3]
    assert _unguarded_starts(ast.parse(good)) == []

"""Loading a snippet file as a module, the way ``python FILE`` would run it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from types import ModuleType

import trio

from ._pages import SNIPPETS


def load(name: str, **env: str) -> ModuleType:
    """``docs/snippets/<name>`` as a fresh module; ``env`` is set while it loads, and
    the file's directory is importable (as it is for ``python FILE``)."""
    path = SNIPPETS / name
    old = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    sys.path.insert(0, str(path.parent))
    try:
        module_name = "docs_snippet_" + name.replace("/", "_").removesuffix(".py")
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and attrs look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(path.parent))
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def shown(name: str) -> str:
    """The text of ``docs/snippets/<name>``: what a page shows a program printing."""
    return (SNIPPETS / name).read_text(encoding="utf-8")


async def run_program(name: str, **env: str) -> str:
    """Run ``python docs/snippets/<name>`` as a process (real clock), with ``env`` added
    to its environment; its stdout."""
    with trio.fail_after(90):
        done = await trio.run_process(
            [sys.executable, SNIPPETS / name],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.stdout.decode()

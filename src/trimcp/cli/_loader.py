"""Find the :class:`~trimcp.Server` a ``trimcp serve`` target names.

A target is ``PATH.py[:NAME]`` (a file, loaded as a fresh module) or
``package.module[:NAME]`` (imported the usual way); ``NAME`` defaults to ``server``.
Every way the target can be wrong raises :class:`LoadError` with a message meant for
a person at a terminal, an error raised by the target's own code while it is imported
included: the message names the error and the line of the target that raised it, and
the whole traceback is logged at DEBUG (``trimcp --log-level DEBUG serve ...``).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import traceback
from types import ModuleType

from trimcp.server import Server

__all__ = ["DEFAULT_ATTRIBUTE", "LoadError", "load_server", "split_target"]

#: The attribute looked up when the target names none.
DEFAULT_ATTRIBUTE = "server"

logger = logging.getLogger("trimcp.cli")


class LoadError(Exception):
    """The target does not name a loadable :class:`~trimcp.Server`."""


def split_target(target: str) -> tuple[str, str]:
    """Split ``where[:NAME]`` into ``(where, NAME)``.

    The split is at the last colon, but a colon followed by a path separator (a
    Windows drive letter such as ``C:\\``) is part of the path.
    """
    where, sep, name = target.rpartition(":")
    if not sep or not where or "/" in name or "\\" in name:
        return target, DEFAULT_ATTRIBUTE
    if not name.isidentifier():
        raise LoadError(f"{name!r} is not a valid attribute name (in target {target!r})")
    return where, name


def _is_path(where: str) -> bool:
    return where.endswith(".py") or os.sep in where or "/" in where


def _load_file(path: str) -> ModuleType:
    if not os.path.isfile(path):
        raise LoadError(f"no such file: {path}")
    absolute = os.path.abspath(path)
    module_name = "__trimcp_serve__"
    spec = importlib.util.spec_from_file_location(module_name, absolute)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered before running it, so dataclasses/attrs/pickle can find the module, and
    # the file's folder goes first on the path, as `python FILE.py` would put it.
    sys.modules[module_name] = module
    folder = os.path.dirname(absolute)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise _import_failed(path, exc) from exc
    return module


def _import_failed(what: str, exc: Exception) -> LoadError:
    """One line for an error raised while importing *what*: the error, and where."""
    logger.debug("importing %s failed", what, exc_info=exc)
    where = ""
    if isinstance(exc, SyntaxError) and exc.filename is not None:
        where = f" ({exc.filename}, line {exc.lineno})"
        detail = exc.msg
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            where = f" ({frames[-1].filename}, line {frames[-1].lineno})"
        detail = str(exc)
    text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return LoadError(f"importing {what} failed: {text}{where}")


def _load_module(name: str) -> ModuleType:
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise LoadError(f"no module named {name!r}") from None
        raise _import_failed(name, exc) from exc
    except Exception as exc:
        raise _import_failed(name, exc) from exc


def load_server(target: str) -> Server:
    """Import ``target`` and return the :class:`~trimcp.Server` it names."""
    where, attribute = split_target(target)
    module = _load_file(where) if _is_path(where) else _load_module(where)
    try:
        obj = getattr(module, attribute)
    except AttributeError:
        raise LoadError(f"{where} has no attribute {attribute!r}") from None
    if not isinstance(obj, Server):
        raise LoadError(f"{where}:{attribute} is a {type(obj).__name__}, not a trimcp.Server")
    return obj

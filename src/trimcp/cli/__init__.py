"""The ``trimcp`` command: ``trimcp serve FILE.py[:NAME]`` and friends."""

from ._loader import LoadError as LoadError
from ._loader import load_server as load_server
from ._main import build_parser as build_parser
from ._main import main as main

__all__ = ["LoadError", "build_parser", "load_server", "main"]

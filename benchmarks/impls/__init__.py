"""The implementations under test, imported lazily by name.

Each module exposes ``IMPLEMENTATION`` (a :class:`benchmarks.core.Implementation`), or
the registry names another attribute as ``module:ATTR``.
Importing one may fail (the SDK not installed); the worker reports that instead of
measuring anything.
"""

from __future__ import annotations

import importlib

from benchmarks.core import Implementation

#: name -> module holding ``IMPLEMENTATION``; order is the display order.
REGISTRY = {
    "trimcp": "benchmarks.impls.trimcp_impl",
    "trimcp-raw": "benchmarks.impls.trimcp_raw",
    "sdk": "benchmarks.impls.sdk_impl",
    "sdk-direct": "benchmarks.impls.sdk_direct",
    "floor": "benchmarks.impls.floor_impl",
    "h11-trimcp": "benchmarks.impls.h11_client:TRIMCP",
    "h11-sdk": "benchmarks.impls.h11_client:SDK",
}

#: What a plain ``python -m benchmarks`` compares.
DEFAULT = ("trimcp", "sdk", "floor")

#: The default per transport, where it differs (only some implementations have it).
DEFAULT_BY_TRANSPORT = {"http": ("trimcp", "sdk", "h11-trimcp", "h11-sdk")}


def load(name: str) -> Implementation:
    """Import and return the implementation called ``name`` (ImportError if unusable)."""
    module_name, _, attribute = REGISTRY[name].partition(":")
    module = importlib.import_module(module_name)
    impl: Implementation = getattr(module, attribute or "IMPLEMENTATION")
    return impl

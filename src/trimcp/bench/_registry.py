"""The implementations under test, imported lazily by name.

Importing one may fail (the SDK is an optional install); the worker then reports it
as unavailable instead of measuring anything in its place.
"""

from __future__ import annotations

import importlib

from ._core import Implementation

__all__ = ["DEFAULT_BY_TRANSPORT", "REGISTRY", "TRANSPORTS", "load"]

#: name -> "module:ATTRIBUTE" (modules of this package); order is the display order.
REGISTRY = {
    "trimcp": "_impl_trimcp:IMPLEMENTATION",
    "trimcp-json": "_impl_trimcp:JSON_PARK",
    "trimcp-hypercorn": "_impl_trimcp:HYPERCORN",
    "sdk": "_impl_sdk:IMPLEMENTATION",
    "sdk-json": "_impl_sdk:JSON_MODE",
    "floor": "_impl_floor:FLOOR",
    "floor-objects": "_impl_floor:FLOOR_OBJECTS",
    "floor-hypercorn": "_impl_floor:FLOOR_HYPERCORN",
    "raw-trimcp": "_impl_floor:RAW_TRIMCP",
    "raw-sdk": "_impl_floor:RAW_SDK",
    "external": "_impl_floor:EXTERNAL",
}

TRANSPORTS = ("memory", "stdio", "http", "websocket")

#: What runs by default on each transport.
DEFAULT_BY_TRANSPORT = {
    "memory": ("trimcp", "sdk", "floor", "floor-objects"),
    "stdio": ("trimcp", "sdk", "floor", "raw-trimcp", "raw-sdk"),
    "http": (
        "trimcp",
        "trimcp-json",
        "trimcp-hypercorn",
        "sdk",
        "sdk-json",
        "floor",
        "floor-hypercorn",
        "raw-trimcp",
        "raw-sdk",
    ),
    # The SDK is listed so that the report says it has no WebSocket transport.
    "websocket": ("trimcp", "sdk", "floor", "raw-trimcp"),
}


def load(name: str) -> Implementation:
    """Import and return the implementation called ``name`` (ImportError if unusable)."""
    module_name, _, attribute = REGISTRY[name].partition(":")
    module = importlib.import_module(f"{__package__}.{module_name}")
    impl: Implementation = getattr(module, attribute)
    return impl

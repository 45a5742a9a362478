"""How the raw floor and the raw clients put a JSON-RPC message on the wire.

``LINES`` is a JSON text with its line terminator (NDJSON; over WebSocket the terminator
is dropped, over HTTP the body is the text), ``OBJECTS`` no encoding at all: the message
dict itself crosses (the memory floor comparable to trimcp's memory transport, which
passes message objects). The report names the codec each implementation uses, so that a
floor is never measured with a slower codec than the stack it bounds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["LINES", "OBJECTS", "Codec"]


@dataclass(frozen=True)
class Codec:
    """``loads`` reads one message from the wire, ``dumps`` writes one."""

    name: str
    loads: Callable[[Any], Any]
    dumps: Callable[[Any], Any]


def _line(message: Any) -> str:
    return json.dumps(message) + "\n"


def _same(message: Any) -> Any:
    return message


LINES = Codec("json (stdlib)", json.loads, _line)
OBJECTS = Codec("none: message objects", _same, _same)

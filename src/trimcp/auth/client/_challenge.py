"""``WWW-Authenticate`` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1).

A header holds one or more challenges, ``scheme`` followed by ``name=value`` parameters
(values are tokens or quoted strings), or a ``token68``; several headers add up. Only
what the MCP client acts on is kept: per scheme (lower-cased), the parameters
``resource_metadata``, ``scope``, ``error`` and ``error_description``, plus any other
parameter by name. Parsing never raises: what cannot be read is skipped, so a hostile
header costs nothing but itself (and is bounded in length by the HTTP client).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, final

import attrs

__all__ = ["Challenge", "parse_challenges"]

_TCHAR: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_MAX_HEADER: Final = 8192


@final
@attrs.frozen
class Challenge:
    """One challenge: its scheme (lower-case) and parameters (names lower-case)."""

    scheme: str
    params: dict[str, str] = attrs.field(factory=dict)

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scope(self) -> list[str] | None:
        """The scopes it asks for, or ``None`` when it names none."""
        value = self.params.get("scope")
        if value is None:
            return None
        return [s for s in value.split(" ") if s]

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def token(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _TCHAR:
            self.pos += 1
        return self.text[start : self.pos]

    def quoted(self) -> str:
        """A quoted string (the opening quote is the current character)."""
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == "\\" and self.pos < len(self.text):
                out.append(self.text[self.pos])
                self.pos += 1
            elif char == '"':
                return "".join(out)
            else:
                out.append(char)
        return "".join(out)

    def skip_item(self) -> None:
        """Skip to the next comma (an unreadable item)."""
        while self.pos < len(self.text) and self.text[self.pos] != ",":
            if self.text[self.pos] == '"':
                self.quoted()
            else:
                self.pos += 1


def _parse_one(text: str) -> list[Challenge]:
    reader = _Reader(text[:_MAX_HEADER])
    out: list[Challenge] = []
    current: Challenge | None = None
    while reader.pos < len(reader.text):
        reader.spaces()
        if reader.peek() == ",":
            reader.pos += 1
            continue
        start = reader.pos
        word = reader.token()
        if not word:
            reader.skip_item()
            continue
        reader.spaces()
        if reader.peek() == "=" and current is not None:
            # name=value, unless it is a token68's padding ("abc==")
            reader.pos += 1
            reader.spaces()
            if reader.peek() == '"':
                value = reader.quoted()
            else:
                value = reader.token()
                if reader.peek() == "=":  # token68 padding: not a parameter
                    reader.skip_item()
                    continue
            current.params.setdefault(word.lower(), value)
            reader.spaces()
            if reader.peek() not in ("", ","):
                reader.skip_item()
            continue
        if reader.pos == start:  # pragma: no cover - token() consumed nothing
            reader.pos += 1
            continue
        # A new challenge: the scheme, then maybe a token68 or the first parameter.
        current = Challenge(word.lower())
        out.append(current)
        reader.spaces()
        after = reader.pos
        name = reader.token()
        reader.spaces()
        if name and reader.peek() == "=":
            reader.pos = after  # a parameter: read it on the next round
        elif name:
            reader.skip_item()  # a token68 (never used by MCP)
    return out


def parse_challenges(values: Iterable[str]) -> list[Challenge]:
    """Every challenge in the given ``WWW-Authenticate`` header values (see the module doc)."""
    out: list[Challenge] = []
    for value in values:
        out.extend(_parse_one(value))
    return out

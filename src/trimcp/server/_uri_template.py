"""RFC 6570 URI templates: parsing, expansion, and linear-time matching.

Supported: levels 1-3 (``{var}``, ``{+var}``, ``{#var}``, ``{.var}``, ``{/var}``,
``{;var}``, ``{?a,b}``, ``{&a}``, several variables per expression) and the level 4
modifiers ``:N`` (prefix) and ``*`` (explode, as lists).

Matching never uses a regular expression. The template is a fixed sequence of literals
and expressions; each expression takes the characters its operator allows, up to the
next literal (found with ``str.find`` from the current position), and matching never
goes back. Each step is linear in the URI, so a hostile URI costs time proportional to
its length times the (fixed, small) number of parts of the template: there is no
backtracking to blow up (the ReDoS of nested-quantifier template regexes).

A matched value is percent-decoded; a value (or a path segment of one) that decodes to
``.`` or ``..``, or that contains a NUL, a backslash, or (for expressions that do not
allow reserved characters) a decoded ``/``, is refused: the URI does not match. That
closes ``..`` traversal, plain or percent-encoded, before a template function sees it.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Final, final
from urllib.parse import quote, unquote

import attrs

__all__ = ["MAX_URI_LENGTH", "UriTemplate", "UriTemplateError"]

#: URIs longer than this never match (they are refused before any scanning).
MAX_URI_LENGTH: Final = 16 * 1024

_UNRESERVED: Final = frozenset(string.ascii_letters + string.digits + "-._~")
_RESERVED: Final = frozenset(":/?#[]@!$&'()*+,;=")
_VARCHARS: Final = frozenset(string.ascii_letters + string.digits + "_.%")

# operator -> (first, separator, named, if_empty, allow_reserved)
_OPERATORS: Final[dict[str, tuple[str, str, bool, str, bool]]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}

Value = str | list[str]


class UriTemplateError(ValueError):
    """The template text is not a valid (supported) RFC 6570 template."""


@final
@attrs.frozen
class _Var:
    name: str
    prefix: int | None
    explode: bool


@final
@attrs.frozen
class _Expr:
    operator: str
    variables: tuple[_Var, ...]

    @property
    def first(self) -> str:
        return _OPERATORS[self.operator][0]

    @property
    def separator(self) -> str:
        return _OPERATORS[self.operator][1]

    @property
    def named(self) -> bool:
        return _OPERATORS[self.operator][2]

    @property
    def if_empty(self) -> str:
        """What follows a named variable's name when its value is empty (RFC 6570:
        ``=`` for ``?`` and ``&``, nothing for ``;``)."""
        return _OPERATORS[self.operator][3]

    @property
    def allow_reserved(self) -> bool:
        return _OPERATORS[self.operator][4]


def _parse_var(spec: str, template: str) -> _Var:
    explode = spec.endswith("*")
    if explode:
        spec = spec[:-1]
    prefix: int | None = None
    name, colon, length = spec.partition(":")
    if colon:
        if not length.isdigit() or not 0 < int(length) < 10000:
            raise UriTemplateError(f"bad prefix modifier in {template!r}")
        prefix = int(length)
    if not name or not set(name) <= _VARCHARS or name.startswith(".") or ".." in name:
        raise UriTemplateError(f"bad variable name {name!r} in {template!r}")
    return _Var(name, prefix, explode)


def _parse(template: str) -> tuple[tuple[str | _Expr, ...], tuple[str, ...]]:
    parts: list[str | _Expr] = []
    names: list[str] = []
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        literal = template[pos:] if start < 0 else template[pos:start]
        if "}" in literal:
            raise UriTemplateError(f"unbalanced '}}' in {template!r}")
        if literal:
            parts.append(literal)
        if start < 0:
            break
        end = template.find("}", start)
        if end < 0:
            raise UriTemplateError(f"unclosed expression in {template!r}")
        body = template[start + 1 : end]
        operator = body[:1] if body[:1] in _OPERATORS else ""
        specs = body[len(operator) :].split(",")
        variables = tuple(_parse_var(spec, template) for spec in specs)
        for var in variables:
            if var.name in names:
                raise UriTemplateError(f"variable {var.name!r} repeats in {template!r}")
            names.append(var.name)
        expr = _Expr(operator, variables)
        if parts and isinstance(parts[-1], _Expr) and (not expr.first or parts[-1].allow_reserved):
            raise UriTemplateError(
                f"two adjacent expressions cannot be matched unambiguously in {template!r}"
            )
        parts.append(expr)
        pos = end + 1
    return tuple(parts), tuple(names)


def _safe(value: str) -> bool:
    """Whether a decoded value is free of traversal and control tricks."""
    if "\x00" in value or "\\" in value:
        return False
    return all(segment not in (".", "..") for segment in value.split("/"))


@final
class UriTemplate:
    """A parsed RFC 6570 template; see the module doc for what matching accepts.

    Raises:
        UriTemplateError: the template is malformed.
    """

    __slots__ = ("_parts", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts, self.variables = _parse(template)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    @property
    def is_static(self) -> bool:
        """Whether the template has no expressions (it names one URI)."""
        return not self.variables

    # ------------------------------------------------------------------ expansion
    def expand(self, values: Mapping[str, Value]) -> str:
        """Expand with ``values`` (strings, or lists for exploded/list variables)."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            items: list[str] = []
            safe = ":/?#[]@!$&'()*+,;=" if part.allow_reserved else ""
            for var in part.variables:
                value = values.get(var.name)
                if value is None or (not isinstance(value, str) and not value):
                    continue  # undefined: no value, or an empty list (RFC 6570 2.3)
                if isinstance(value, str):
                    text = value[: var.prefix] if var.prefix else value
                    encoded = quote(text, safe=safe)
                    if part.named:
                        items.append(
                            f"{var.name}={encoded}" if encoded else var.name + part.if_empty
                        )
                    else:
                        items.append(encoded)
                    continue
                encoded_items = [quote(item, safe=safe) for item in value]
                joiner = part.separator if var.explode else ","
                if part.named and var.explode:
                    items.extend(f"{var.name}={item}" for item in encoded_items)
                elif part.named:
                    items.append(f"{var.name}=" + ",".join(encoded_items))
                else:
                    items.append(joiner.join(encoded_items))
            if items:
                out.append(part.first + part.separator.join(items))
        return "".join(out)

    # ------------------------------------------------------------------ matching
    def match(self, uri: str) -> dict[str, Value] | None:
        """The variables of ``uri`` if it matches this template, else ``None``.

        Linear in ``len(uri)``; refuses traversal (see the module doc).
        """
        if len(uri) > MAX_URI_LENGTH:
            return None
        found: dict[str, Value] = {}
        pos = 0
        parts = self._parts
        for index, part in enumerate(parts):
            if isinstance(part, str):
                if not uri.startswith(part, pos):
                    return None
                pos += len(part)
                continue
            following = parts[index + 1] if index + 1 < len(parts) else None
            if isinstance(following, _Expr):
                # Adjacent expressions are only allowed when the next one starts with
                # an operator character the current one then stops at.
                end = self._extent(part, uri, pos, None, following.first)
            else:
                end = self._extent(part, uri, pos, following)
            if end is None or not self._bind(part, uri[pos:end], found):
                return None
            pos = end
        return found if pos == len(uri) else None

    @staticmethod
    def _extent(part: _Expr, uri: str, pos: int, literal: str | None, stop: str = "") -> int | None:
        """Where the text of expression ``part`` starting at ``pos`` ends."""
        if literal is not None:
            limit = uri.find(literal, pos)
            if limit < 0:
                return None
        else:
            limit = len(uri)
        if part.allow_reserved:
            return limit
        # Without reserved characters the text is unreserved / pct-encoded characters,
        # the operator's own delimiters, and "=" / "," for named and list values.
        allowed = _UNRESERVED | {"%", ",", part.first, part.separator}
        if part.named:
            allowed |= {"="}
        allowed -= {stop}
        end = pos
        while end < limit and uri[end] in allowed:
            end += 1
        return end

    @staticmethod
    def _bind(part: _Expr, text: str, found: dict[str, Value]) -> bool:
        if not text:
            return True  # every variable undefined
        if part.first:
            if not text.startswith(part.first):
                return False
            text = text[len(part.first) :]
        pieces = text.split(part.separator)
        if part.named:
            return UriTemplate._bind_named(part, pieces, found)
        variables = part.variables
        if len(variables) == 1 and (variables[0].explode or part.separator == ","):
            var = variables[0]
            if var.explode:
                values = [unquote(piece) for piece in pieces]
            else:
                values = [unquote(piece) for piece in text.split(",")]
            return UriTemplate._store(part, var, values, found)
        if part.separator == "," and not part.allow_reserved:
            pieces = text.split(",")
        if len(pieces) > len(variables):
            return False
        for var, piece in zip(variables, pieces, strict=False):
            if not UriTemplate._store(part, var, [unquote(piece)], found):
                return False
        return True

    @staticmethod
    def _bind_named(part: _Expr, pieces: Sequence[str], found: dict[str, Value]) -> bool:
        by_name = {var.name: var for var in part.variables}
        lists: dict[str, list[str]] = {}
        for piece in pieces:
            name, _, raw = piece.partition("=")
            var = by_name.get(name)
            if var is None:
                return False
            values = [unquote(raw)] if var.explode else [unquote(v) for v in raw.split(",")]
            lists.setdefault(name, []).extend(values)
        for name, values in lists.items():
            if not UriTemplate._store(part, by_name[name], values, found):
                return False
        return True

    @staticmethod
    def _store(part: _Expr, var: _Var, values: list[str], found: dict[str, Value]) -> bool:
        for value in values:
            if not _safe(value) or (not part.allow_reserved and "/" in value):
                return False
            if var.prefix is not None and len(value) > var.prefix:
                return False
        if var.explode or len(values) > 1:
            found[var.name] = values
        else:
            found[var.name] = values[0]
        return True

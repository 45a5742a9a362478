"""Strict JSON text to Python value, with every failure turned into a -32700 or a duplicate report.

The stdlib C parser does the work; this module only closes the gaps between "what ``json.loads``
accepts" and "what a JSON-RPC peer may send" (go-sdk CVE-2026-27896 is the parser-differential bug
this prevents):

- bytes must be strict UTF-8 without a byte order mark. ``json.loads(bytes)`` would sniff UTF-16/32
  and a BOM; we decode ourselves instead.
- ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON, and neither is a number that overflows to an
  infinite float (``1e999``): both are refused, so nothing non-finite ever reaches ``encode``.
- integers with absurd digit counts are refused: CPython's ``int_max_str_digits`` (4300 by default)
  raises ``ValueError`` for us; when that limit has been switched off, a guarded decoder with a
  ``parse_int`` hook takes over, so a 10**6-digit integer never costs quadratic time.
- nesting is capped *before* parsing (the C parser recurses). The pre-check counts ``[`` and ``{``
  at C speed; only when that count exceeds the cap does a precise scan run (see ``_too_deep``:
  C-level passes, Python objects per run of brackets, never per byte). ``RecursionError`` is
  caught as well, for callers who raise the cap.
- duplicate member names in any object raise :class:`DuplicateMembers`, which carries a second,
  lenient parse of the text so that the caller can still echo a readable id.

How duplicates are found without a Python call per member list: the C parser builds each object
as a dict and an object hook adds up the members the dicts kept. In valid JSON every member has
exactly one ``:`` outside strings, so the text's ``:`` count is the number of members written
plus the colons inside strings. The members kept are those written minus the duplicates dropped.
When the two counts are equal, both differences are zero: no duplicate (the common message has
no colon in a string, and is settled here). Otherwise the colons outside strings are counted
exactly (:func:`_members`) and compared with the members kept. An ``object_pairs_hook`` would
cost a list of pairs and a call per object, about twice the parse itself.
"""

from __future__ import annotations

import json
import math
import operator
import re
import sys
import threading
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Final

from ._codes import PARSE_ERROR
from ._errors import LocalProtocolError, RemoteProtocolError
from ._events import ErrorObject, ErrorResponse

__all__ = ["AMBIGUOUS", "DEFAULT_MAX_DEPTH", "DuplicateMembers", "parse_json"]

DEFAULT_MAX_DEPTH: Final = 64
"""Default cap on nested arrays/objects in one message (faults-and-limits table (d))."""

_MAX_INT_DIGITS: Final = 4300  # CPython's default int_max_str_digits
_BOM: Final = b"\xef\xbb\xbf"

# translate(): keep only quotes and brackets, folding "{" "}" into "[" "]" (only depth matters).
_NON_STRUCTURE: Final = bytes(b for b in range(256) if b not in b'"[]{}')
_FOLD_BRACKETS: Final = bytes.maketrans(b"{}", b"[]")
# translate(): keep only quotes and colons (a colon outside strings is a member's).
_NON_MEMBER: Final = bytes(b for b in range(256) if b not in b'":')
_RUNS: Final = re.compile(rb"\[+|\]+")


class DuplicateMembers(Exception):
    """An object had the same member name twice. ``value`` is the lenient parse of the message."""

    def __init__(self, value: Any) -> None:
        super().__init__("duplicate member name")
        self.value = value


class _Ambiguous:
    """Stands in for the value of a duplicated member in the lenient parse."""

    def __repr__(self) -> str:
        return "AMBIGUOUS"


AMBIGUOUS: Final = _Ambiguous()


class _NonFinite(ValueError):
    pass


def _lenient_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        obj[key] = AMBIGUOUS if key in obj else value
    return obj


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NonFinite(text)
    return value


def _bounded_int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS + 1:  # + 1 for a minus sign
        raise ValueError("integer too long")
    return int(text)


_Scan = Callable[[str, int], tuple[Any, int]]


def _make_scanner(*, guard_ints: bool, pairs_hook: Any = None, object_hook: Any = None) -> _Scan:
    """The decoder's scanner (C when CPython has it). Called directly, it spares every
    message ``JSONDecoder.decode`` and ``raw_decode``, two Python frames around it;
    :func:`parse_json` does what they add (whitespace around the value, "Extra data")."""
    decoder = json.JSONDecoder(
        object_hook=object_hook,
        object_pairs_hook=pairs_hook,
        parse_constant=_refuse_constant,
        parse_float=_finite_float,
        parse_int=_bounded_int if guard_ints else None,
    )
    scan: _Scan = decoder.scan_once  # type: ignore[attr-defined]  # set by __init__, untyped
    return scan


class _Counting(threading.local):
    """Per thread (a scan runs Python code, the object hook, where another thread may
    parse too): scanners whose object hook adds each object's member count to
    ``kept[0]``."""

    def __init__(self) -> None:
        kept = self.kept = [0]

        def count(obj: dict[str, Any]) -> dict[str, Any]:
            kept[0] += len(obj)
            return obj

        self.scan = _make_scanner(guard_ints=False, object_hook=count)
        self.scan_guarded = _make_scanner(guard_ints=True, object_hook=count)


_COUNTING: Final = _Counting()
_LENIENT_GUARDED: Final = _make_scanner(guard_ints=True, pairs_hook=_lenient_pairs)
#: JSON's insignificant whitespace (what ``json.decoder.WHITESPACE`` matches).
_SPACE: Final = " \t\n\r"


def _parse_error(reason: str) -> RemoteProtocolError:
    message = "Parse error: " + reason
    hint = ErrorResponse(id=None, error=ErrorObject(code=PARSE_ERROR, message=message))
    return RemoteProtocolError(message, error_hint=hint)


def _outside_strings(raw: bytes, table: bytes | None, delete: bytes) -> bytes:
    """``raw.translate(table, delete)`` of the bytes outside JSON strings (``delete`` must
    drop backslashes and keep quotes). C-level passes only.

    Escaped backslashes, then escaped quotes, are dropped first (left to right, as JSON
    pairs them), so that every remaining quote opens or closes a string (other escapes
    hold no quote); split at quotes, the even pieces are then outside strings."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(raw.translate(table, delete).split(b'"')[::2])


def _too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether ``raw`` nests arrays/objects deeper than ``max_depth`` (brackets in strings ignored).

    Every step is a C-level pass; Python objects are made per run of brackets, never per byte.
    Exact for valid JSON. For malformed JSON it may overestimate, never underestimate, the depth the
    parser would reach before failing; both outcomes are -32700, so only the wording differs.
    """
    brackets = _outside_strings(raw, _FOLD_BRACKETS, _NON_STRUCTURE)
    if not brackets:
        return False
    if b"[" * (max_depth + 1) in brackets:
        return True  # a deep chain: no need to look further
    # Drop the innermost pairs first (one C pass): wide, shallow data then has few runs left.
    # For valid JSON this lowers the depth by exactly one, otherwise by at most one.
    brackets = brackets.replace(b"[]", b"")
    if not brackets:
        return max_depth < 1
    # Depth after each run of openers is the running sum of run lengths, closers counted negative.
    lengths = list(map(len, _RUNS.findall(brackets)))
    if brackets[0] == 0x5D:  # "]" first: malformed, but keep openers on the even indexes
        lengths.insert(0, 0)
    lengths[1::2] = map(operator.neg, lengths[1::2])
    return max(accumulate(lengths)) + 1 > max_depth


def parse_json(data: bytes | bytearray | memoryview | str, max_depth: int) -> Any:
    """Parse one JSON text strictly.

    Raises:
      RemoteProtocolError: -32700 with id null, for every way the text is not acceptable JSON.
      DuplicateMembers: an object repeats a member name (the caller decides the -32600 reply).
    """
    if isinstance(data, str):
        text = data
        raw = None
        openers = text.count("[") + text.count("{")
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = data if isinstance(data, bytes) else bytes(data)
        if raw.startswith(_BOM):
            raise _parse_error("message starts with a byte order mark")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _parse_error("message is not valid UTF-8") from None
        openers = raw.count(b"[") + raw.count(b"{")
    else:
        raise LocalProtocolError(f"cannot decode {type(data).__name__}: expected bytes or str")
    if openers > max_depth:
        if raw is None:
            raw = text.encode("utf-8", "surrogatepass")
        if _too_deep(raw, max_depth):
            raise _parse_error("nesting too deep")
    limit = sys.get_int_max_str_digits()
    counting = _COUNTING
    scan = counting.scan if 0 < limit <= _MAX_INT_DIGITS else counting.scan_guarded
    kept = counting.kept
    before = kept[0]
    # The scan inline, as _lenient makes it: every message passes here.
    try:
        value, end = scan(text, len(text) - len(text.lstrip(_SPACE)))
    except (ValueError, StopIteration, RecursionError) as exc:
        raise _scan_error(exc) from None
    if end != len(text) and text[end:].strip(_SPACE):
        raise _parse_error("invalid JSON")  # more after the value
    members = kept[0] - before
    if members != text.count(":") and members != _members(raw, text):
        # Rare path: parse again keeping every member, so that a readable id can still
        # be echoed.
        raise DuplicateMembers(_lenient(text))
    return value


def _members(raw: bytes | None, text: str) -> int:
    """The number of members written in ``text`` (valid JSON; ``raw`` its bytes, if it
    came as bytes): its ``:`` outside strings."""
    if raw is None:
        raw = text.encode("utf-8", "surrogatepass")
    return len(_outside_strings(raw, None, _NON_MEMBER))  # only colons are left


def _lenient(text: str) -> Any:
    """``text`` parsed keeping duplicated members (as :data:`AMBIGUOUS`)."""
    try:
        value, end = _LENIENT_GUARDED(text, len(text) - len(text.lstrip(_SPACE)))
    except (ValueError, StopIteration, RecursionError) as exc:
        raise _scan_error(exc) from None
    if end != len(text) and text[end:].strip(_SPACE):
        raise _parse_error("invalid JSON")  # more after the value
    return value


def _scan_error(exc: ValueError | StopIteration | RecursionError) -> RemoteProtocolError:
    """The -32700 a scan's failure is reported as."""
    if isinstance(exc, _NonFinite):
        return _parse_error("NaN, Infinity and out-of-range numbers are not allowed")
    if isinstance(exc, RecursionError):
        return _parse_error("nesting too deep")
    if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError):
        return _parse_error("number too long")  # the int digit limit
    return _parse_error("invalid JSON")  # StopIteration: no value at all

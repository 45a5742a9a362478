"""Checks every HTTP request passes before the server does any work for it.

Each check raises :class:`HttpError`, which carries the HTTP status, the JSON-RPC
error for the body, extra headers and whether the connection must be closed. They run
in the order of cost: framing (smuggling shapes, header size), then DNS-rebinding
(``Host``/``Origin``, in :mod:`._hosts`), then method-specific media types, then the
session id's shape.
None of them reads the body or touches the session table.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import Any, Final, TypeVar, final

from trimcp.wire import INVALID_REQUEST, RequestId

__all__ = [
    "Headers",
    "HttpError",
    "accepts",
    "check_framing",
    "check_session_id",
    "is_json_content_type",
]

#: JSON-RPC code for transport-level refusals (the spec leaves it to implementations).
SERVER_ERROR: Final = -32000
SESSION_ID_PATTERN: Final = re.compile(r"[\x21-\x7e]{1,128}")


class HttpError(Exception):
    """A refusal: the HTTP status and the JSON-RPC error body that goes with it."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int = INVALID_REQUEST,
        headers: Sequence[tuple[bytes, bytes]] = (),
        close: bool = False,
        id: RequestId | None = None,
        body: bytes | None = None,
        data: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = list(headers)
        self.close = close
        self.id = id
        #: A ready-made JSON-RPC body (the wire layer's error hint) instead of one
        #: built from ``code`` and ``message``.
        self.body = body
        #: The JSON-RPC error's ``data`` member (``None``: no data member).
        self.data = data


@final
class Headers:
    """The request headers of an ASGI scope: names lower-case, values latin-1."""

    __slots__ = ("_first", "_raw", "_repeated", "size")

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        # The scope's own list, looked up when asked: a request parked in a handler
        # keeps no decoded copy of its headers alive. ASGI servers send names in lower
        # case (h11 and hypercorn do); a list with any other name is folded once here,
        # so that every lookup compares bytes as they are.
        # (C-level passes over the pairs: no Python call per header.)
        pairs: Sequence[tuple[bytes, bytes]]
        pairs = raw if type(raw) is list or isinstance(raw, Sequence) else list(raw)
        names = b"".join(map(_NAME, pairs))
        if names.lower() != names:  # some name has an upper-case letter
            pairs = [(name.lower(), value) for name, value in pairs]
        self._raw = pairs
        self.size = len(names) + sum(map(len, map(_VALUE, pairs)))
        # The first value of each name, by name (built in C: a dozen lookups per
        # request are then a dict's, not a scan each), and whether any name repeats
        # (only then does :meth:`get_all` scan).
        self._first = dict(reversed(pairs))
        self._repeated = len(self._first) != len(pairs)

    def get(self, name: str) -> str | None:
        """The first value of header ``name`` (given lower-case), or ``None``."""
        value = self._first.get(_KEYS.get(name) or _key(name))  # (known names: no call)
        return None if value is None else value.decode("latin-1")

    def names(self) -> list[str]:
        """Every header name present (lower-case)."""
        return list(dict.fromkeys(name.decode("latin-1") for name, _ in self._raw))

    def get_all(self, name: str) -> list[str]:
        """Every value of header ``name`` (given lower-case), in order."""
        key = _KEYS.get(name) or _key(name)
        if not self._repeated:
            value = self._first.get(key)
            return [] if value is None else [value.decode("latin-1")]
        values = []
        for raw_name, value in self._raw:  # a loop, not a comprehension: one call less
            if raw_name == key:
                values.append(value.decode("latin-1"))
        return values


_KEYS: dict[str, bytes] = {}
_NAME: Final = itemgetter(0)
_VALUE: Final = itemgetter(1)


def _key(name: str) -> bytes:
    """``name`` as the bytes it is compared with (the handful of names looked up are
    encoded once)."""
    key = _KEYS.get(name)
    if key is None:
        key = name.encode("latin-1")
        if len(_KEYS) < 256:  # a bound, whatever names callers ask for
            _KEYS[name] = key
    return key


def check_framing(headers: Headers, max_header_bytes: int) -> None:
    """Refuse request-smuggling shapes and oversized header blocks."""
    if headers.size > max_header_bytes:
        raise HttpError(431, "Request header fields too large", close=True)
    lengths = headers.get_all("content-length")
    if not lengths:
        return  # nothing to smuggle with (Transfer-Encoding alone is h11's to frame)
    if headers.get("transfer-encoding") is not None:
        raise HttpError(400, "Bad Request: both Content-Length and Transfer-Encoding", close=True)
    if len(lengths) > 1 or "," in lengths[0]:
        raise HttpError(400, "Bad Request: more than one Content-Length", close=True)
    if not lengths[0].strip().isdigit():
        raise HttpError(400, "Bad Request: invalid Content-Length", close=True)


#: Header values parsed per request are kept when at most this long (clients send the
#: same few values over and over), the last :data:`PARSED_KEPT` of them: a bound on
#: what a client sending ever new values can make the server hold.
PARSED_MAX_LEN: Final = 256
PARSED_KEPT: Final = 256

_T = TypeVar("_T")


def kept(parse: Callable[[str], _T]) -> Callable[[str], _T]:
    """``parse``, its results for short values kept (see :data:`PARSED_MAX_LEN`)."""
    cached = functools.lru_cache(maxsize=PARSED_KEPT)(parse)

    @functools.wraps(parse)
    def parse_kept(value: str) -> _T:
        return cached(value) if len(value) <= PARSED_MAX_LEN else parse(value)

    return parse_kept


@kept
def _media_types(value: str) -> frozenset[str]:
    """The media types a header value lists, without parameters."""
    if not value:
        return frozenset()
    return frozenset(part.split(";", 1)[0].strip().lower() for part in value.split(","))


def accepts(headers: Headers, *media_types: str) -> bool:
    """Whether ``Accept`` admits every one of ``media_types`` (wildcards count)."""
    values = headers.get_all("accept")
    offered = frozenset().union(*map(_media_types, values))
    if "*/*" in offered:
        return True
    for mt in media_types:  # a loop, not a generator: no call per media type
        if mt not in offered and mt.split("/")[0] + "/*" not in offered:
            return False
    return True


def is_json_content_type(headers: Headers) -> bool:
    """``Content-Type: application/json``, parameters (``charset=utf-8``) allowed."""
    return _media_types(headers.get("content-type") or "") == {"application/json"}


def check_session_id(value: str) -> None:
    """400 for a session id outside ``^[\\x21-\\x7E]{1,128}$`` (never looked up)."""
    if SESSION_ID_PATTERN.fullmatch(value) is None:
        raise HttpError(400, "Bad Request: malformed Mcp-Session-Id")

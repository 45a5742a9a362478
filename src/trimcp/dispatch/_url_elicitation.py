"""``-32042 URLElicitationRequiredError`` (2025-11-25): a request cannot go on until the
user has completed one or more URL-mode elicitations.

The same class serves both sides. A server handler raises it (the engine answers the
request with code ``-32042`` and ``data.elicitations``); a client receives it from any
call whose answer carries that code and a well-formed ``data``: the decoder registered
here turns the error object back into this class, so ``except
UrlElicitationRequiredError as exc: exc.elicitations`` works on every request. An answer
with code ``-32042`` but malformed ``data`` stays a plain :class:`McpError` (a peer's
bad input must not become a crash in the decoder).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from trimcp.binding import structure, unstructure
from trimcp.protocol import ElicitUrlParams
from trimcp.wire import URL_ELICITATION_REQUIRED, ErrorObject

from ._errors import McpError, register_error_type

__all__ = ["MAX_REQUIRED_ELICITATIONS", "UrlElicitationRequiredError"]

#: Elicitations one ``-32042`` answer may list; a longer list from a peer is not decoded.
MAX_REQUIRED_ELICITATIONS: Final = 64


class UrlElicitationRequiredError(McpError):
    """The request needs the user to finish URL-mode elicitations first (``-32042``).

    Every elicitation must carry an ``elicitation_id`` (the spec requires one for each, so
    the server can later send ``notifications/elicitation/complete`` for it).

    Raises:
      ValueError: ``elicitations`` is empty, too long, or one has no ``elicitation_id``.
    """

    def __init__(
        self,
        elicitations: Sequence[ElicitUrlParams],
        message: str = "This request requires more information.",
    ) -> None:
        if not elicitations or len(elicitations) > MAX_REQUIRED_ELICITATIONS:
            raise ValueError(
                f"a URL elicitation error lists 1 to {MAX_REQUIRED_ELICITATIONS} elicitations"
            )
        if any(e.elicitation_id is None for e in elicitations):
            raise ValueError("every URL elicitation of a -32042 error needs an elicitation_id")
        self.elicitations: tuple[ElicitUrlParams, ...] = tuple(elicitations)
        super().__init__(
            URL_ELICITATION_REQUIRED,
            message,
            {"elicitations": [unstructure(e) for e in self.elicitations]},
        )

    @property
    def elicitation_ids(self) -> list[str]:
        """The ids of the listed elicitations, in order."""
        return [e.elicitation_id for e in self.elicitations if e.elicitation_id is not None]


def _decode(error: ErrorObject) -> McpError | None:
    data = error.data
    if not isinstance(data, dict):
        return None
    items = data.get("elicitations")
    if not isinstance(items, list) or not 0 < len(items) <= MAX_REQUIRED_ELICITATIONS:
        return None
    try:
        parsed = [structure(item, ElicitUrlParams) for item in items]
        return UrlElicitationRequiredError(parsed, error.message)
    except Exception:  # malformed data: the caller gets the plain McpError
        return None


register_error_type(URL_ELICITATION_REQUIRED, _decode)

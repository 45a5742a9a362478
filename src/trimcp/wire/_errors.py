"""The two ways the wire layer can fail, after h11 and wsproto.

- :class:`LocalProtocolError`: *we* misused the API (built an invalid event, asked to encode
  something that is not a message, fed data after EOF). It is a bug on our side; nothing is sent
  to the peer.
- :class:`RemoteProtocolError`: the *peer* sent something we cannot accept. It carries
  ``error_hint``, the JSON-RPC error to send back (``None`` when no reply is due), and ``fatal``,
  which says that the byte stream cannot be resynchronised and the transport must send the hint
  and close.

Decoding entry points promise to raise nothing but :class:`RemoteProtocolError` for any input; the
property tests in ``tests/properties/test_wire_properties.py`` hold them to it. Messages are short,
generic and never contain a repr of the input, so they are safe to put on the wire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._events import ErrorResponse

__all__ = ["LocalProtocolError", "ProtocolError", "RemoteProtocolError"]


class ProtocolError(Exception):
    """Abstract base of the wire layer's errors; catch it to handle both kinds.

    It cannot be raised directly: pick :class:`LocalProtocolError` or :class:`RemoteProtocolError`,
    so that every handler knows whose fault the error is.
    """

    def __init__(self, message: str) -> None:
        if type(self) is ProtocolError:
            raise TypeError(
                "ProtocolError is abstract; raise LocalProtocolError or RemoteProtocolError"
            )
        super().__init__(message)


class LocalProtocolError(ProtocolError):
    """This side misused the wire API (a bug in the caller, never the peer's fault)."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something invalid.

    Args:
      message: a short human-readable description, safe to log and to send.
      error_hint: the JSON-RPC error response to send back, or ``None`` when no reply is due (for
        example a malformed *response*, which the session drops and logs).
      fatal: ``True`` when the stream cannot be resynchronised (an oversized line or event); the
        transport must send ``error_hint`` if there is one and then close.
    """

    error_hint: ErrorResponse | None
    fatal: bool

    def __init__(
        self, message: str, *, error_hint: ErrorResponse | None, fatal: bool = False
    ) -> None:
        super().__init__(message)
        self.error_hint = error_hint
        self.fatal = fatal

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments defeat the default exception pickling (it replays ``self.args``).
        return (_rebuild_remote, (str(self), self.error_hint, self.fatal))


def _rebuild_remote(
    message: str, error_hint: ErrorResponse | None, fatal: bool
) -> RemoteProtocolError:
    return RemoteProtocolError(message, error_hint=error_hint, fatal=fatal)

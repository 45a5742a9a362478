"""The moment a session's handshake is done, as the transport sees it.

A session opened by ``initialize`` is on probation until the client sends
``notifications/initialized`` (the session manager gives it ``handshake_timeout``).
The channels of both HTTP transports report that moment through their
``on_initialized`` hook, from :func:`note_initialized`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

from trimcp.wire import Message, Notification

__all__ = ["INITIALIZED", "note_initialized"]

INITIALIZED: Final = "notifications/initialized"


class _Hooked(Protocol):
    on_initialized: Callable[[], None] | None


def note_initialized(channel: _Hooked, message: Message) -> None:
    """Call ``channel.on_initialized`` (once) if ``message`` ends the handshake."""
    hook = channel.on_initialized
    if hook is not None and isinstance(message, Notification) and message.method == INITIALIZED:
        channel.on_initialized = None
        hook()
